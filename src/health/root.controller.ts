import { Controller, Get, Header, HttpCode } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/decorators/access.decorators.js';
import { RootResponse } from './dto/health.response.js';

const ROOT: RootResponse = { name: 'Workflow Automation Service', docs: '/docs', openapi: '/openapi.json', health: '/health/ready' };

/**
 * `GET /` sends a browser to the API documentation (302 to /docs) and tells a client where things
 * are (the same links as JSON in the body, for `curl` and friends). Public, and limited per source
 * IP like the other public routes (docs/ROUTES.md).
 */
@ApiTags('Operations')
@Public()
@Controller()
export class RootController {
  @Get()
  @HttpCode(302)
  @Header('Location', ROOT.docs)
  @Header('Cache-Control', 'no-cache')
  @ApiOperation({ summary: 'Points to the API documentation: a redirect to /docs, with the links in the body' })
  @ApiResponse({ status: 302, description: 'Found: the documentation is at /docs', type: RootResponse, headers: { Location: { description: 'Where the documentation is: `/docs`', schema: { type: 'string', enum: ['/docs'] } } } })
  root(): RootResponse {
    return ROOT;
  }
}
