import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';
import { PageQuery } from '../../common/pagination/page.query.js';

export class ListChannelAccountsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: CHANNELS })
  @IsOptional()
  @IsIn(CHANNELS as unknown as string[], { message: `channel must be one of ${CHANNELS.join(', ')}` })
  channel?: string;
}
