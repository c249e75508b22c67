import { ApiKey } from '../auth/api-keys/entities/api-key.entity.js';
import { JwtClient } from '../auth/jwt-clients/entities/jwt-client.entity.js';
import { OAuthAuthorizationCode } from '../auth/oauth/entities/oauth-authorization-code.entity.js';
import { OAuthClient } from '../auth/oauth/entities/oauth-client.entity.js';
import { OAuthRefreshToken } from '../auth/oauth/entities/oauth-refresh-token.entity.js';
import { OAuthRevokedToken } from '../auth/oauth/entities/oauth-revoked-token.entity.js';
import { Organization } from '../auth/organizations/entities/organization.entity.js';
import { User } from '../auth/users/entities/user.entity.js';
import { OutboxEvent } from '../events/entities/outbox-event.entity.js';
import { ChannelAccount } from '../channels/entities/channel-account.entity.js';
import { Customer } from '../customers/entities/customer.entity.js';
import { ExecutionStep } from '../executions/entities/execution-step.entity.js';
import { Message } from '../customers/entities/message.entity.js';
import { TriggerExecution } from '../executions/entities/trigger-execution.entity.js';
import { WorkflowExecution } from '../executions/entities/workflow-execution.entity.js';
import { KnowledgeBase } from '../knowledge-bases/entities/knowledge-base.entity.js';
import { Pet } from '../pets/entities/pet.entity.js';
import { Trigger } from '../triggers/entities/trigger.entity.js';
import { WebhookDeliveryAttempt } from '../webhooks/entities/webhook-delivery-attempt.entity.js';
import { WebhookDelivery } from '../webhooks/entities/webhook-delivery.entity.js';
import { Webhook } from '../webhooks/entities/webhook.entity.js';
import { WorkflowVersion } from '../workflows/entities/workflow-version.entity.js';
import { Workflow } from '../workflows/entities/workflow.entity.js';

/** Every entity, listed explicitly (glob patterns are fragile under ES modules). */
export const ENTITIES = [
  Organization, ApiKey, User, Workflow, WorkflowVersion, Pet,
  Trigger, Customer, Message, WorkflowExecution, ExecutionStep, TriggerExecution, KnowledgeBase, OutboxEvent,
  Webhook, WebhookDelivery, WebhookDeliveryAttempt,
  JwtClient,
  ChannelAccount,
  OAuthClient, OAuthAuthorizationCode, OAuthRefreshToken, OAuthRevokedToken,
];
