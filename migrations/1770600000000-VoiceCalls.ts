import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Phone calls answered with TwiML (a `twilio` channel account's `/voice` route):
 * - `voice_calls`: one row per call (Twilio's CallSid, unique per account), the execution it started
 *   (null until started: `claimed_at` lets another request take over a start that died half-way), and
 *   how the call ended (Twilio's terminal CallStatus).
 * - `voice_call_turns`: one row per turn of a call (0: the call coming in; N: the caller's answer to the
 *   question of turn N-1), unique per call and turn, so a repeated request records nothing twice. A
 *   turn keeps the caller's input, the TwiML it was answered with (the same answer to a repeated
 *   request), the question asked in it (asked again when the caller says nothing), the time of the
 *   last outbound message it spoke (the next turn speaks what came after), and whether the input was
 *   handed to the execution (`delivering_at`: a lease, so that one request delivers it and another takes
 *   over only if that one died).
 * Deleting the account deletes its calls; the executions stay.
 */
export class VoiceCalls1770600000000 implements MigrationInterface {
  name = 'VoiceCalls1770600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE voice_calls (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        channel_account_id uuid NOT NULL REFERENCES channel_accounts(id) ON DELETE CASCADE,
        call_sid varchar(64) NOT NULL,
        caller varchar(64) NOT NULL,
        execution_id uuid,
        claimed_at timestamptz NOT NULL DEFAULT now(),
        end_status varchar(32),
        ended_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_voice_calls_account_sid UNIQUE (channel_account_id, call_sid)
      )`);
    await q.query(`CREATE INDEX idx_voice_calls_org_created ON voice_calls (organization_id, created_at)`);
    await q.query(`
      CREATE TABLE voice_call_turns (
        call_id uuid NOT NULL REFERENCES voice_calls(id) ON DELETE CASCADE,
        turn int NOT NULL CHECK (turn >= 0),
        input text,
        twiml text,
        prompt text,
        said_until timestamptz,
        delivering_at timestamptz,
        delivered boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        answered_at timestamptz,
        PRIMARY KEY (call_id, turn)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE voice_call_turns`);
    await q.query(`DROP TABLE voice_calls`);
  }
}
