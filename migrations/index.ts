import { Foundation1763769600000 } from './1763769600000-Foundation.js';
import { ExecutionEngine1763856000000 } from './1763856000000-ExecutionEngine.js';
import { WorkflowCounts1763942400000 } from './1763942400000-WorkflowCounts.js';
import { DropUnreadIndexes1764028800000 } from './1764028800000-DropUnreadIndexes.js';
import { ExecutionListIndexes1764115200000 } from './1764115200000-ExecutionListIndexes.js';
import { WorkflowSearch1764201600000 } from './1764201600000-WorkflowSearch.js';
import { ExecutionRollups1764288000000 } from './1764288000000-ExecutionRollups.js';
import { TimeOrderedIds1764374400000 } from './1764374400000-TimeOrderedIds.js';
import { Webhooks1765000000000 } from './1765000000000-Webhooks.js';
import { JwtClients1766000000000 } from './1766000000000-JwtClients.js';
import { OAuthServer1767100000000 } from './1767100000000-OAuthServer.js';
import { MetricsCustomerSketches1767300000000 } from './1767300000000-MetricsCustomerSketches.js';
import { AnalyticsReadIndexes1767312000000 } from './1767312000000-AnalyticsReadIndexes.js';
import { ListsWorkflowsVersion1767400000000 } from './1767400000000-ListsWorkflowsVersion.js';
import { AnalyticsFiles1767900000000 } from './1767900000000-AnalyticsFiles.js';
import { PerformanceRollups1768000000000 } from './1768000000000-PerformanceRollups.js';
import { JourneyRollups1768100000000 } from './1768100000000-JourneyRollups.js';
import { EngagementRollups1768200000000 } from './1768200000000-EngagementRollups.js';
import { RunningByCustomer1768400000000 } from './1768400000000-RunningByCustomer.js';
import { TriggerPlans1768500000000 } from './1768500000000-TriggerPlans.js';
import { AnswersIndexOnly1768600000000 } from './1768600000000-AnswersIndexOnly.js';
import { AnswerDays1769100000000 } from './1769100000000-AnswerDays.js';
import { ExecutionRetries1769300000000 } from './1769300000000-ExecutionRetries.js';
import { WorkflowMessageTriggers1769600000000 } from './1769600000000-WorkflowMessageTriggers.js';
import { RunningByWorkflow1769700000000 } from './1769700000000-RunningByWorkflow.js';
import { EngagementDaySets1769800000000 } from './1769800000000-EngagementDaySets.js';
import { ServiceKeys1769910000000 } from './1769910000000-ServiceKeys.js';
import { OAuthClientSecretMethods1769950000000 } from './1769950000000-OAuthClientSecretMethods.js';
import { RollupFolding1770000000000 } from './1770000000000-RollupFolding.js';
import { OutboxPolled1770100000000 } from './1770100000000-OutboxPolled.js';
import { OutboxPurgeByKey1770200000000 } from './1770200000000-OutboxPurgeByKey.js';
import { ChannelAccounts1770300000000 } from './1770300000000-ChannelAccounts.js';
import { DeliveryRollups1770400000000 } from './1770400000000-DeliveryRollups.js';
import { DeliveryRollupsFolded1770500000000 } from './1770500000000-DeliveryRollupsFolded.js';
import { VoiceCalls1770600000000 } from './1770600000000-VoiceCalls.js';
import { CustomerHandoff1770700000000 } from './1770700000000-CustomerHandoff.js';
import { MessageBursts1770800000000 } from './1770800000000-MessageBursts.js';
import { OrganizationLimits1770900000000 } from './1770900000000-OrganizationLimits.js';
import { TraceContext1770950000000 } from './1770950000000-TraceContext.js';
import { ExecutionRetention1771000000000 } from './1771000000000-ExecutionRetention.js';
import { ConsoleOAuthClient1771100000000 } from './1771100000000-ConsoleOAuthClient.js';
import { ExecutionsPartitioned1771200000000 } from './1771200000000-ExecutionsPartitioned.js';
import { MessagesPartitioned1771200000001 } from './1771200000001-MessagesPartitioned.js';
import { WebhookDeliveriesPartitioned1771200000002 } from './1771200000002-WebhookDeliveriesPartitioned.js';
import { WorkflowVersionHistory1771300000000 } from './1771300000000-WorkflowVersionHistory.js';
import { TriggerExecutionsRunning1771400000000 } from './1771400000000-TriggerExecutionsRunning.js';
import { RollupFoldGenericPlans1771500000000 } from './1771500000000-RollupFoldGenericPlans.js';

/** Every migration, in the order it runs. A new migration is added at the end. */
export const MIGRATIONS = [
  Foundation1763769600000, ExecutionEngine1763856000000, WorkflowCounts1763942400000, DropUnreadIndexes1764028800000,
  ExecutionListIndexes1764115200000,
  WorkflowSearch1764201600000,
  ExecutionRollups1764288000000,
  TimeOrderedIds1764374400000,
  Webhooks1765000000000,
  JwtClients1766000000000,
  OAuthServer1767100000000,
  MetricsCustomerSketches1767300000000,
  AnalyticsReadIndexes1767312000000,
  ListsWorkflowsVersion1767400000000,
  AnalyticsFiles1767900000000,
  PerformanceRollups1768000000000,
  JourneyRollups1768100000000,
  EngagementRollups1768200000000,
  RunningByCustomer1768400000000,
  TriggerPlans1768500000000,
  AnswersIndexOnly1768600000000,
  AnswerDays1769100000000,
  ExecutionRetries1769300000000,
  WorkflowMessageTriggers1769600000000,
  RunningByWorkflow1769700000000,
  EngagementDaySets1769800000000,
  ServiceKeys1769910000000,
  OAuthClientSecretMethods1769950000000,
  RollupFolding1770000000000,
  OutboxPolled1770100000000,
  OutboxPurgeByKey1770200000000,
  ChannelAccounts1770300000000,
  DeliveryRollups1770400000000,
  DeliveryRollupsFolded1770500000000,
  VoiceCalls1770600000000,
  CustomerHandoff1770700000000,
  MessageBursts1770800000000,
  OrganizationLimits1770900000000,
  TraceContext1770950000000,
  ExecutionRetention1771000000000,
  ConsoleOAuthClient1771100000000,
  ExecutionsPartitioned1771200000000,
  MessagesPartitioned1771200000001,
  WebhookDeliveriesPartitioned1771200000002,
  WorkflowVersionHistory1771300000000,
  TriggerExecutionsRunning1771400000000,
  RollupFoldGenericPlans1771500000000,
];
