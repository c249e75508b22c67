import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { ApiData, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { paginate } from '../common/pagination/page.query.js';
import { AgentMessageResponse, CustomerDetailResponse, CustomerResponse, MessageResponse } from './dto/customer.response.js';
import { AgentMessageDto, StartHandoffDto } from './dto/handoff.dto.js';
import { ListCustomersQuery, ListMessagesQuery } from './dto/list-customers.query.js';
import { CustomersService } from './customers.service.js';
import { HandoffService } from './handoff.service.js';

const CUSTOMER_ID = ApiParam({
  name: 'customer_id',
  description: 'The client\'s id of the customer, URL-encoded in the path (a phone number\'s "+" may also be sent as %2B)',
  example: '+15551234567',
});

@ApiTags('Customers')
@Controller('v1/customers')
export class CustomersController {
  constructor(
    private readonly customers: CustomersService,
    private readonly handoffs: HandoffService,
  ) {}

  @Get()
  @RequireAccess('executions', 'read')
  @ApiOperation({ summary: 'List customers, newest first' })
  @ApiPage(CustomerResponse)
  @ApiErrors(400)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListCustomersQuery) {
    const [items, total] = await this.customers.listCustomers(principal.organizationId, query);
    return paginate(items.map(CustomerResponse.from), total, query);
  }

  @Get(':customer_id')
  @RequireAccess('executions', 'read')
  @CUSTOMER_ID
  @ApiOperation({ summary: 'Get a customer with the attributes collected by forms and whether a person has their conversation (handoff)' })
  @ApiData(CustomerDetailResponse)
  @ApiErrors(404)
  async get(@CurrentPrincipal() principal: Principal, @Param('customer_id') customerId: string) {
    return ok(CustomerDetailResponse.fromDetail(await this.customers.getCustomerDetail(principal.organizationId, customerId)));
  }

  @Post(':customer_id/handoff')
  @HttpCode(200)
  @RequireAccess('executions', 'write')
  @CUSTOMER_ID
  @ApiOperation({
    summary:
      "A person takes the customer's conversation over: their running executions end (EXECUTION_HANDED_OFF) and their messages start and resume nothing until it ends (DELETE, or HANDOFF_TIMEOUT). On an active handoff: extended, 200 as well",
  })
  @ApiData(CustomerDetailResponse)
  @ApiErrors(400, 404)
  async startHandoff(@CurrentPrincipal() principal: Principal, @Param('customer_id') customerId: string, @Body() body: StartHandoffDto) {
    await this.handoffs.start(principal.organizationId, customerId, body.reason);
    return ok(CustomerDetailResponse.fromDetail(await this.customers.getCustomerDetail(principal.organizationId, customerId)));
  }

  @Delete(':customer_id/handoff')
  @RequireAccess('executions', 'write')
  @CUSTOMER_ID
  @ApiOperation({ summary: "Ends the customer's handoff: their messages run workflows again (200 with the customer, also when none was active)" })
  @ApiData(CustomerDetailResponse)
  @ApiErrors(404)
  async endHandoff(@CurrentPrincipal() principal: Principal, @Param('customer_id') customerId: string) {
    await this.handoffs.end(principal.organizationId, customerId);
    return ok(CustomerDetailResponse.fromDetail(await this.customers.getCustomerDetail(principal.organizationId, customerId)));
  }

  @Post(':customer_id/messages')
  @HttpCode(201)
  @RequireAccess('executions', 'write')
  @CUSTOMER_ID
  @ApiOperation({
    summary:
      "A person's message to the customer through a channel account (default: the one they last wrote from), queued behind the workflow's; starts a handoff if none is active",
  })
  @ApiData(AgentMessageResponse, 201, 'Created')
  @ApiErrors(400, 404, 409)
  async sendMessage(@CurrentPrincipal() principal: Principal, @Param('customer_id') customerId: string, @Body() body: AgentMessageDto) {
    const sent = await this.handoffs.sendAgentMessage(principal.organizationId, customerId, { content: body.content, channelAccountId: body.channel_account_id });
    return ok(AgentMessageResponse.from(sent));
  }

  @Get(':customer_id/messages')
  @RequireAccess('executions', 'read')
  @CUSTOMER_ID
  @ApiOperation({ summary: 'List a customer\'s messages in both directions, newest first' })
  @ApiPage(MessageResponse)
  @ApiErrors(400, 404)
  async messages(@CurrentPrincipal() principal: Principal, @Param('customer_id') customerId: string, @Query() query: ListMessagesQuery) {
    const [items, total] = await this.customers.listCustomerMessages(principal.organizationId, customerId, query);
    return paginate(items.map(MessageResponse.from), total, query);
  }
}
