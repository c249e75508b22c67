import { Injectable } from '@nestjs/common';
import type { FormField } from '../../workflows/node-types/form.node-type.js';
import { parseAnswer, promptFor, repromptFor } from './form-answers.js';
import type { NodeContext, NodeHandler, NodeOutcome } from './node-handler.js';
import { isoTime } from '../../common/iso-time.js';

/**
 * Asks for each field in turn. The execution waits (status running) between replies; each
 * valid answer is stored on the customer at once, an invalid one is asked again.
 */
@Injectable()
export class FormNodeHandler implements NodeHandler {
  readonly type = 'form';

  async run(ctx: NodeContext): Promise<NodeOutcome> {
    const fields = ctx.node.fields as FormField[];
    let form = ctx.state.form;
    if (!form || form.nodeId !== ctx.node.id) {
      form = { nodeId: ctx.node.id, fieldIndex: 0, answers: {}, startedAt: isoTime(new Date()) };
      ctx.state.form = form;
      await ctx.send(promptFor(fields[0]));
    }

    for (let reply = ctx.nextReply(); reply !== undefined; reply = ctx.nextReply()) {
      const field = fields[form.fieldIndex];
      const parsed = parseAnswer(field, reply);
      if (!parsed.ok) {
        await ctx.send(repromptFor(field));
        continue;
      }
      form.answers[field.name] = parsed.value;
      if (parsed.value !== null) await ctx.updateCustomer({ [field.name]: parsed.value });
      form.fieldIndex += 1;
      if (form.fieldIndex === fields.length) {
        ctx.state.form = undefined;
        return {
          status: 'completed',
          startedAt: new Date(form.startedAt),
          input: { fields: fields.map((f) => f.name) },
          output: { answers: form.answers },
        };
      }
      await ctx.send(promptFor(fields[form.fieldIndex]));
    }
    return { status: 'waiting' };
  }
}
