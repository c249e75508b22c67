import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';
import { PageQuery } from '../../common/pagination/page.query.js';

export class ListCustomersQuery extends PageQuery {
  @ApiPropertyOptional({ enum: CHANNELS, description: 'Channel of the customer\'s latest contact' })
  @IsOptional()
  @IsIn(CHANNELS as unknown as string[], { message: `channel must be one of ${CHANNELS.join(', ')}` })
  channel?: string;
}

/** Pagination of a customer's messages. */
export class ListMessagesQuery extends PageQuery {}
