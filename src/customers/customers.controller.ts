import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { ApiData, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { paginate } from '../common/pagination/page.query.js';
import { CustomerResponse, MessageResponse } from './dto/customer.response.js';
import { ListCustomersQuery, ListMessagesQuery } from './dto/list-customers.query.js';
import { CustomersService } from './customers.service.js';

const CUSTOMER_ID = ApiParam({
  name: 'customer_id',
  description: 'The client\'s id of the customer, URL-encoded in the path (a phone number\'s "+" may also be sent as %2B)',
  example: '+15551234567',
});

@ApiTags('Customers')
@Controller('v1/customers')
export class CustomersController {
  constructor(private readonly customers: CustomersService) {}

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
  @ApiOperation({ summary: 'Get a customer with the attributes collected by forms' })
  @ApiData(CustomerResponse)
  @ApiErrors(404)
  async get(@CurrentPrincipal() principal: Principal, @Param('customer_id') customerId: string) {
    return ok(CustomerResponse.from(await this.customers.getCustomer(principal.organizationId, customerId)));
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
