import { Injectable } from '@nestjs/common';
import type { MessageTemplate } from '../channels/channel-adapter.js';
import type { NodeContext, NodeHandler, NodeOutcome } from './node-handler.js';

@Injectable()
export class MessageNodeHandler implements NodeHandler {
  readonly type = 'message';

  async run(ctx: NodeContext): Promise<NodeOutcome> {
    const content = ctx.node.content as string;
    const template = ctx.node.template as MessageTemplate | undefined;
    const { messageId } = await ctx.send(content, { template });
    return { status: 'completed', input: { content }, output: { message_sent: true, message_id: messageId, content } };
  }
}
