import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChannelAccountsController } from './channel-accounts.controller.js';
import { ChannelAccountsService } from './channel-accounts.service.js';
import { ChannelAccount } from './entities/channel-account.entity.js';

/**
 * Channel accounts as a resource (CRUD, sealed credentials). Apart from ChannelsModule so that the
 * triggers module can check an account named by POST /v1/messages while the channels module uses the
 * triggers module's conversation path.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ChannelAccount])],
  controllers: [ChannelAccountsController],
  providers: [ChannelAccountsService],
  exports: [ChannelAccountsService],
})
export class ChannelAccountsModule {}
