import { ApiKey } from '../auth/api-keys/entities/api-key.entity.js';
import { Organization } from '../auth/organizations/entities/organization.entity.js';
import { User } from '../auth/users/entities/user.entity.js';
import { Pet } from '../pets/entities/pet.entity.js';
import { WorkflowVersion } from '../workflows/entities/workflow-version.entity.js';
import { Workflow } from '../workflows/entities/workflow.entity.js';

/** Every entity, listed explicitly (glob patterns are fragile under ES modules). */
export const ENTITIES = [Organization, ApiKey, User, Workflow, WorkflowVersion, Pet];
