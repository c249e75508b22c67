/** The specification's success envelopes. Controllers return these explicitly; nothing guesses. */
export interface DataEnvelope<T> {
  data: T;
}

export interface MessageEnvelope {
  message: string;
}

export function ok<T>(data: T): DataEnvelope<T> {
  return { data };
}

export function deleted(message: string): MessageEnvelope {
  return { message };
}
