import { Inject, Injectable } from '@nestjs/common';
import { KNOWLEDGE_RESPONDER, type KnowledgeResponder } from '../../knowledge-bases/knowledge-responder.js';
import type { NodeContext, NodeHandler, NodeOutcome } from './node-handler.js';

/** Answers the customer's latest message from the node's knowledge base. */
@Injectable()
export class AiResponseNodeHandler implements NodeHandler {
  readonly type = 'ai_response';

  constructor(@Inject(KNOWLEDGE_RESPONDER) private readonly responder: KnowledgeResponder) {}

  async run(ctx: NodeContext): Promise<NodeOutcome> {
    const knowledgeBase = ctx.node.knowledge_base as string;
    const question = ctx.state.lastMessage ?? '';
    const input = { question, knowledge_base: knowledgeBase };
    let answer;
    try {
      answer = await this.responder.answer(ctx.execution.organizationId, knowledgeBase, question);
    } catch (error) {
      return { status: 'failed', input, error: { code: 'AI_RESPONSE_FAILED', message: (error as Error).message } };
    }
    await ctx.send(answer.response);
    return { status: 'completed', input, output: { response: answer.response, confidence: answer.confidence } };
  }
}
