import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, Repository } from 'typeorm';
import { SecretBox } from '../common/crypto/secret-box.js';
import { isUuid } from '../common/ids/uuid.js';
import { insertOutboxEvents } from '../events/outbox.sql.js';
import { AppConfig } from '../config/app-config.js';
import { parseChannelAndProvider, parseCredentials, parseSettings, parseVerifyToken } from './channel-account-input.js';
import { ChannelAccountNotFoundError, ChannelErrorCodes, InvalidChannelAccountError } from './channels.errors.js';
import type { CreateChannelAccountDto } from './dto/create-channel-account.dto.js';
import type { ListChannelAccountsQuery } from './dto/list-channel-accounts.query.js';
import type { UpdateChannelAccountDto } from './dto/update-channel-account.dto.js';
import { ChannelAccount, type ChannelAccountSettings } from './entities/channel-account.entity.js';
import { providerDefinition, type ProviderDefinition } from './providers/provider-definitions.js';
import { deliveryEventData } from './channels.sql.js';

/**
 * How long a process reuses an account it has read by id (the provider webhooks and the sender read one
 * per request and per send): a change made through another process reaches it within this. A change
 * made through this process applies at once.
 */
export const ACCOUNT_CACHE_MS = 2_000;
/** Opened credentials kept per process, by sealed value (a change seals a new value, so none is ever stale). */
const OPENED_LIMIT = 1_000;

/** What a response shows beside the row: the URL to paste into the provider's console, the verify token. */
export interface ChannelAccountView {
  account: ChannelAccount;
  webhookUrl: string;
  verifyToken: string | null;
  credentialNames: readonly string[];
}

/**
 * Channel accounts: CRUD with the field rules of channel-account-input.ts. Credentials and the verify
 * token are sealed with the row's id as context (a sealed value copied to another row does not open),
 * and opened only to send, to check a signature or to show the verify token to the account's owner.
 */
@Injectable()
export class ChannelAccountsService {
  constructor(
    @InjectRepository(ChannelAccount) private readonly accounts: Repository<ChannelAccount>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly secretBox: SecretBox,
    private readonly config: AppConfig,
  ) {}

  private readonly recent = new Map<string, { account: ChannelAccount | null; until: number }>();
  private readonly opened = new Map<string, Record<string, string>>();

  async list(organizationId: string, query: ListChannelAccountsQuery): Promise<[ChannelAccountView[], number]> {
    const where = { organizationId, ...(query.channel ? { channel: query.channel } : {}) };
    const [rows, total] = await this.accounts.findAndCount({ where, order: { createdAt: 'DESC', id: 'DESC' }, skip: query.offset, take: query.limit });
    return [rows.map((a) => this.view(a)), total];
  }

  /** The caller's account, or 404 as if absent (another organization's, or a malformed id). */
  async getOwned(organizationId: string, id: string): Promise<ChannelAccount> {
    if (!isUuid(id)) throw new ChannelAccountNotFoundError();
    const account = await this.accounts.findOne({ where: { id, organizationId } });
    if (!account) throw new ChannelAccountNotFoundError();
    return account;
  }

  async get(organizationId: string, id: string): Promise<ChannelAccountView> {
    return this.view(await this.getOwned(organizationId, id));
  }

  /** A message naming an account: the caller's, and of the message's channel. */
  async checkChannel(organizationId: string, id: string, channel: string): Promise<ChannelAccount> {
    const account = await this.findById(id);
    if (!account || account.organizationId !== organizationId) throw new ChannelAccountNotFoundError();
    if (account.channel !== channel) {
      throw new InvalidChannelAccountError(`channel_account_id is a ${account.channel} account; the message's channel is ${channel}`, 'channel_account_id');
    }
    return account;
  }

  /**
   * Any organization's account by id (the provider webhooks, which the signature authenticates; the
   * sender), read at most every ACCOUNT_CACHE_MS per process.
   */
  async findById(id: string): Promise<ChannelAccount | null> {
    if (!isUuid(id)) return null;
    const cached = this.recent.get(id);
    if (cached && cached.until > Date.now()) return cached.account;
    const account = await this.accounts.findOne({ where: { id } });
    if (this.recent.size >= OPENED_LIMIT) this.recent.clear();
    this.recent.set(id, { account, until: Date.now() + ACCOUNT_CACHE_MS });
    return account;
  }

  async create(organizationId: string, dto: CreateChannelAccountDto): Promise<ChannelAccountView> {
    const { channel, provider, definition } = parseChannelAndProvider(dto.channel, dto.provider);
    const credentials = parseCredentials(definition, dto.credentials);
    const verifyToken = parseVerifyToken(definition, dto.verify_token, null);
    const settings = await this.checkedSettings(organizationId, dto.settings, undefined, channel);
    const id = randomUUID();
    const account = this.accounts.create({
      id,
      organizationId,
      name: dto.name,
      channel,
      provider,
      credentialsSealed: this.secretBox.seal(JSON.stringify(credentials), id),
      credentialFields: Object.keys(credentials),
      verifyTokenSealed: verifyToken === null ? null : this.secretBox.seal(verifyToken, `${id}:verify_token`),
      settings,
    });
    return this.view(await this.accounts.save(account));
  }

  async update(organizationId: string, id: string, dto: UpdateChannelAccountDto): Promise<ChannelAccountView> {
    const account = await this.getOwned(organizationId, id);
    const definition = this.definitionOf(account);
    if (dto.name !== undefined) account.name = dto.name;
    if (dto.credentials !== undefined) {
      const credentials = parseCredentials(definition, dto.credentials, this.credentialsOf(account));
      account.credentialsSealed = this.secretBox.seal(JSON.stringify(credentials), account.id);
      account.credentialFields = Object.keys(credentials);
    }
    if (dto.verify_token !== undefined) {
      const token = parseVerifyToken(definition, dto.verify_token, this.verifyTokenOf(account));
      account.verifyTokenSealed = token === null ? null : this.secretBox.seal(token, `${account.id}:verify_token`);
    }
    if (dto.settings !== undefined) account.settings = await this.checkedSettings(organizationId, dto.settings, account.settings, account.channel);
    const saved = await this.accounts.save(account);
    this.recent.delete(saved.id);
    return this.view(saved);
  }

  /**
   * Deletes the account: its webhooks are 404 from now on, its stored payloads go with it, and its
   * messages not yet sent fail with CHANNEL_ACCOUNT_DELETED (the sender also finds it gone). History
   * (messages, executions) keeps the account's id.
   */
  async remove(organizationId: string, id: string): Promise<void> {
    const account = await this.getOwned(organizationId, id);
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `WITH failed AS (
           UPDATE message_deliveries SET status = 'failed', failed_at = now(), updated_at = now(), error_code = $2, error_title = 'The channel account was deleted'
            WHERE channel_account_id = $1 AND status IN ('queued', 'sending')
           RETURNING message_id, organization_id, customer_id, execution_id, failed_at
         )
         ${insertOutboxEvents(`
         SELECT f.organization_id, 'message.failed',
                ${deliveryEventData({
                  messageId: 'f.message_id', customerRef: 'c.external_id', channel: 'm.channel', accountId: '$1::uuid', providerMessageId: 'NULL',
                  executionId: 'f.execution_id', status: `'failed'`, at: 'f.failed_at', error: `jsonb_build_object('code', $2::text, 'title', 'The channel account was deleted')`,
                })}
           FROM failed f JOIN messages m ON m.id = f.message_id JOIN customers c ON c.id = f.customer_id`)}`,
        [account.id, ChannelErrorCodes.accountDeleted],
      );
      await manager.delete(ChannelAccount, { id: account.id, organizationId });
    });
    this.recent.delete(account.id);
  }

  definitionOf(account: ChannelAccount): ProviderDefinition {
    const definition = providerDefinition(account.provider);
    if (!definition) throw new Error(`Channel account ${account.id} has an unknown provider`);
    return definition;
  }

  credentialsOf(account: ChannelAccount): Record<string, string> {
    const key = `${account.id}:${account.credentialsSealed}`;
    let credentials = this.opened.get(key);
    if (!credentials) {
      credentials = JSON.parse(this.secretBox.open(account.credentialsSealed, account.id)) as Record<string, string>;
      if (this.opened.size >= OPENED_LIMIT) this.opened.clear();
      this.opened.set(key, credentials);
    }
    return credentials;
  }

  verifyTokenOf(account: ChannelAccount): string | null {
    return account.verifyTokenSealed === null ? null : this.secretBox.open(account.verifyTokenSealed, `${account.id}:verify_token`);
  }

  /** The URL the provider calls: `/webhook` for Meta, `/voice` for Twilio's calls. */
  webhookUrl(account: Pick<ChannelAccount, 'id' | 'provider'>): string {
    const path = providerDefinition(account.provider)?.meta === false ? 'voice' : 'webhook';
    return `${this.config.publicBaseUrl}/v1/channel-accounts/${account.id}/${path}`;
  }

  private view(account: ChannelAccount): ChannelAccountView {
    return {
      account,
      webhookUrl: this.webhookUrl(account),
      verifyToken: this.verifyTokenOf(account),
      credentialNames: Object.keys(this.definitionOf(account).credentials),
    };
  }

  private async checkedSettings(organizationId: string, input: unknown, current: ChannelAccountSettings | undefined, channel: string): Promise<ChannelAccountSettings> {
    const settings = parseSettings(input, current, channel);
    if (settings.workflow_id && settings.workflow_id !== current?.workflow_id) {
      const found: unknown[] = await this.dataSource.query(`SELECT 1 FROM workflows WHERE id = $1 AND organization_id = $2`, [settings.workflow_id, organizationId]);
      if (found.length === 0) throw new InvalidChannelAccountError('settings.workflow_id is not a workflow of this organization', 'settings.workflow_id');
    }
    return settings;
  }
}
