import { Body, Controller, Delete, Get, Param, Put, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { ApiData, ApiDeleted, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { deleted, ok } from '../common/http/envelope.js';
import { PageQuery, paginate } from '../common/pagination/page.query.js';
import { KnowledgeBaseNameParam } from './dto/knowledge-base-name.param.js';
import { KnowledgeBaseResponse, KnowledgeBaseSummaryResponse } from './dto/knowledge-base.response.js';
import { PutKnowledgeBaseDto } from './dto/put-knowledge-base.dto.js';
import { KnowledgeBasesService } from './knowledge-bases.service.js';

// Knowledge bases are part of a workflow's configuration (ai_response nodes name them), so they
// share the workflows permission and scopes.
@ApiTags('Knowledge bases')
@Controller('v1/knowledge-bases')
export class KnowledgeBasesController {
  constructor(private readonly knowledgeBases: KnowledgeBasesService) {}

  @Get()
  @RequireAccess('workflows', 'read')
  @ApiOperation({ summary: 'List knowledge bases (without entries), newest first' })
  @ApiPage(KnowledgeBaseSummaryResponse)
  @ApiErrors(400)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: PageQuery) {
    const [items, total] = await this.knowledgeBases.list(principal.organizationId, query);
    return paginate(items.map(KnowledgeBaseSummaryResponse.from), total, query);
  }

  @Get(':name')
  @RequireAccess('workflows', 'read')
  @ApiOperation({ summary: 'Get a knowledge base with its entries' })
  @ApiData(KnowledgeBaseResponse)
  @ApiErrors(400, 404)
  async get(@CurrentPrincipal() principal: Principal, @Param() params: KnowledgeBaseNameParam) {
    return ok(KnowledgeBaseResponse.from(await this.knowledgeBases.getOwned(principal.organizationId, params.name)));
  }

  @Put(':name')
  @RequireAccess('workflows', 'write')
  @ApiOperation({ summary: 'Create a knowledge base (201) or replace all its entries (200)' })
  @ApiData(KnowledgeBaseResponse, 201, 'Created')
  @ApiData(KnowledgeBaseResponse, 200, 'Replaced')
  @ApiErrors(400, 413)
  async put(
    @CurrentPrincipal() principal: Principal,
    @Param() params: KnowledgeBaseNameParam,
    @Body() body: PutKnowledgeBaseDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { knowledgeBase, created } = await this.knowledgeBases.put(principal.organizationId, params.name, body.entries);
    res.status(created ? 201 : 200);
    return ok(KnowledgeBaseResponse.from(knowledgeBase));
  }

  @Delete(':name')
  @RequireAccess('workflows', 'delete')
  @ApiOperation({ summary: 'Delete a knowledge base' })
  @ApiDeleted()
  @ApiErrors(400, 404)
  async delete(@CurrentPrincipal() principal: Principal, @Param() params: KnowledgeBaseNameParam) {
    await this.knowledgeBases.delete(principal.organizationId, params.name);
    return deleted('Knowledge base deleted');
  }
}
