import { Inject, Injectable } from '@nestjs/common';
import { AiProviderError, KnowledgeBaseNotFoundError } from '../../knowledge-bases/knowledge-bases.errors.js';
import { KNOWLEDGE_RESPONDER, type KnowledgeResponder } from '../../knowledge-bases/knowledge-responder.js';
import { TransientNodeError, type NodeContext, type NodeHandler, type NodeOutcome } from './node-handler.js';

/**
 * Answers the customer's latest message from the node's knowledge base. The node fails only for
 * its own reasons: its knowledge base does not exist, or the provider refused the request. Any
 * other error (the provider timing out or failing, the database or network down) is thrown: the
 * engine attempts the node again with back-off (NODE_RETRY_ATTEMPTS) before failing the execution.
 */
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
      if (error instanceof KnowledgeBaseNotFoundError) {
        return { status: 'failed', input, error: { code: 'KNOWLEDGE_BASE_NOT_FOUND', message: `Knowledge base "${knowledgeBase}" not found` } };
      }
      if (error instanceof AiProviderError) {
        // Its message names the status or kind of failure, never the provider's body: a client may read it.
        if (error.transient) throw new TransientNodeError(error.message, { cause: error });
        return { status: 'failed', input, error: { code: 'AI_RESPONSE_FAILED', message: error.message } };
      }
      throw error;
    }
    await ctx.send(answer.response);
    return { status: 'completed', input, output: { response: answer.response, confidence: answer.confidence } };
  }
}
