import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { RateLimitClass } from '../rate-limits/rate-limit.decorators.js';
import { ApiData, ApiDeleted, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { deleted, ok } from '../common/http/envelope.js';
import { CursorPageQuery, paginate } from '../common/pagination/page.query.js';
import { CreateWorkflowDto } from './dto/create-workflow.dto.js';
import { ListWorkflowsQuery } from './dto/list-workflows.query.js';
import { UpdateWorkflowDto } from './dto/update-workflow.dto.js';
import {
  WorkflowActivatedResponse,
  WorkflowDeactivatedResponse,
  WorkflowDetailResponse,
  WorkflowSummaryResponse,
  WorkflowVersionResponse,
  WorkflowVersionSummaryResponse,
} from './dto/workflow.response.js';
import { WorkflowsService } from './workflows.service.js';

@ApiTags('Workflows')
@Controller('v1/workflows')
export class WorkflowsController {
  constructor(private readonly workflows: WorkflowsService) {}

  @Get()
  @RequireAccess('workflows', 'read')
  @RateLimitClass('workflows', 'read')
  @ApiOperation({ summary: 'List workflows (without configuration), newest first' })
  @ApiPage(WorkflowSummaryResponse)
  @ApiErrors(400)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListWorkflowsQuery) {
    const [items, total, nextCursor] = await this.workflows.list(principal.organizationId, query);
    return paginate(items.map(WorkflowSummaryResponse.from), total, query, nextCursor);
  }

  @Get(':workflow_id')
  @RequireAccess('workflows', 'read')
  @RateLimitClass('workflows', 'read')
  @ApiOperation({ summary: 'Get a workflow with its configuration' })
  @ApiData(WorkflowDetailResponse)
  @ApiErrors(404)
  async get(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string) {
    return ok(WorkflowDetailResponse.from(await this.workflows.getOwned(principal.organizationId, id)));
  }

  @Post()
  @HttpCode(201)
  @RequireAccess('workflows', 'write')
  @RateLimitClass('workflows', 'write')
  @ApiOperation({ summary: 'Create a workflow (status draft)' })
  @ApiData(WorkflowSummaryResponse, 201, 'Created')
  @ApiErrors(400, 409, 422)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWorkflowDto) {
    return ok(WorkflowSummaryResponse.from(await this.workflows.create(principal.organizationId, body, principal)));
  }

  @Put(':workflow_id')
  @RequireAccess('workflows', 'write')
  @RateLimitClass('workflows', 'write')
  @ApiOperation({ summary: 'Update a workflow; omitted fields are kept, a new configuration becomes a new version' })
  @ApiData(WorkflowSummaryResponse)
  @ApiErrors(400, 404, 409, 422)
  async update(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string, @Body() body: UpdateWorkflowDto) {
    return ok(WorkflowSummaryResponse.from(await this.workflows.update(principal.organizationId, id, body, principal)));
  }

  @Get(':workflow_id/versions')
  @RequireAccess('workflows', 'read')
  @RateLimitClass('workflows', 'read')
  @ApiOperation({
    summary: "List a workflow's versions (without configuration), newest first",
    description:
      'Version 1 is the configuration the workflow was created with; each update whose configuration differs adds the next one, '
      + 'with the name, description and channel the workflow had then and the credential that wrote it. A change of name, '
      + 'description or channel alone adds none. `after` (a `pagination.next_cursor`) continues below that version.',
  })
  @ApiPage(WorkflowVersionSummaryResponse)
  @ApiErrors(400, 404)
  async versions(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string, @Query() query: CursorPageQuery) {
    const [items, total, nextCursor] = await this.workflows.listVersions(principal.organizationId, id, query);
    return paginate(items.map(WorkflowVersionSummaryResponse.from), total, query, nextCursor);
  }

  @Get(':workflow_id/versions/:version')
  @RequireAccess('workflows', 'read')
  @RateLimitClass('workflows', 'read')
  @ApiParam({ name: 'version', schema: { type: 'integer', minimum: 1, maximum: 2147483647 }, description: 'A version number (400 INVALID_REQUEST on `version` otherwise)' })
  @ApiOperation({ summary: 'Get one version of a workflow with its configuration (404 WORKFLOW_VERSION_NOT_FOUND when it has no such version)' })
  @ApiData(WorkflowVersionResponse)
  @ApiErrors(400, 404)
  async version(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string, @Param('version') version: string) {
    return ok(WorkflowVersionResponse.from(await this.workflows.getVersionOwned(principal.organizationId, id, version)));
  }

  @Delete(':workflow_id')
  @RequireAccess('workflows', 'delete')
  @RateLimitClass('workflows', 'delete')
  @ApiOperation({ summary: 'Delete a workflow' })
  @ApiDeleted()
  @ApiErrors(404)
  async delete(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string) {
    await this.workflows.delete(principal.organizationId, id);
    return deleted('Workflow deleted');
  }

  @Post(':workflow_id/activate')
  @HttpCode(200)
  @RequireAccess('workflows', 'write')
  @RateLimitClass('workflows', 'execution')
  @ApiOperation({ summary: 'Activate a workflow (from any state; it needs a non-empty node graph)' })
  @ApiData(WorkflowActivatedResponse)
  @ApiErrors(400, 404)
  async activate(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string) {
    const w = await this.workflows.activate(principal.organizationId, id);
    return ok(WorkflowActivatedResponse.from(w));
  }

  @Post(':workflow_id/deactivate')
  @HttpCode(200)
  @RequireAccess('workflows', 'write')
  @RateLimitClass('workflows', 'execution')
  @ApiOperation({ summary: 'Deactivate a workflow (from any state)' })
  @ApiData(WorkflowDeactivatedResponse)
  @ApiErrors(404)
  async deactivate(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string) {
    const w = await this.workflows.deactivate(principal.organizationId, id);
    return ok(WorkflowDeactivatedResponse.from(w));
  }
}
