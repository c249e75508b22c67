import PDFDocument from 'pdfkit';
import type { Writable } from 'node:stream';
import type { ReportMetric, ReportRow } from './report-data.js';
import { isoTime } from '../../common/iso-time.js';

export interface PdfReportHeader {
  name: string;
  description: string | null;
  organization: string;
  periodStart: Date;
  periodEnd: Date;
  timezone: string;
  granularity: string;
  generatedAt: Date;
}

const MARGIN = 50;
const LABELS: Record<string, string> = {
  bucket: 'Bucket',
  workflow_name: 'Workflow',
  channel: 'Channel',
  total_executions: 'Executions',
  successful_executions: 'Successful',
  failed_executions: 'Failed',
  success_rate: 'Success rate',
  average_duration_ms: 'Mean ms',
  total_messages_sent: 'Sent',
  total_messages_received: 'Received',
  unique_customers: 'Customers',
  customer_satisfaction: 'Satisfaction',
  messages_delivered: 'Delivered',
  messages_read: 'Read',
  delivery_rate: 'Delivery rate',
  read_rate: 'Read rate',
  handoff_rate: 'Handoff rate',
};

function bucketLabel(date: Date, granularity: string, timezone: string): string {
  const options: Intl.DateTimeFormatOptions =
    granularity === 'hour'
      ? { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }
      : granularity === 'month'
        ? { timeZone: timezone, year: 'numeric', month: '2-digit' }
        : { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' };
  return new Intl.DateTimeFormat('en-CA', options).format(date);
}

function cell(row: ReportRow, column: string, header: PdfReportHeader): string {
  if (column === 'bucket') return bucketLabel(row.bucket, header.granularity, header.timezone);
  const value = (row as unknown as Record<string, unknown>)[column];
  if (value === null || value === undefined) return '–';
  if (column === 'success_rate' || column === 'delivery_rate' || column === 'read_rate' || column === 'handoff_rate') return `${(Number(value) * 100).toFixed(1)}%`;
  if (column === 'customer_satisfaction') return Number(value).toFixed(2);
  return String(value);
}

/**
 * Draws the report: a title block, a chart of executions (bars) and success rate (line) per bucket
 * from the rows themselves, and the table of every row, page after page. Standard PDF fonts only:
 * the file embeds nothing from outside.
 */
export async function writePdfReport(out: Writable, header: PdfReportHeader, columns: readonly string[], rows: readonly ReportRow[]): Promise<void> {
  // Every metric with the bucket (ten columns or more) needs the width of a landscape page for its headings.
  const layout = columns.filter((c) => c !== 'workflow_id').length > 8 ? 'landscape' : 'portrait';
  const doc = new PDFDocument({ size: 'A4', layout, margin: MARGIN, info: { Title: header.name, Author: header.organization, Producer: 'workflow-automation-service' } });
  const done = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
    doc.on('error', reject);
  });
  doc.pipe(out);

  doc.font('Helvetica-Bold').fontSize(18).text(header.name);
  doc.moveDown(0.3).font('Helvetica').fontSize(10);
  doc.text(`Organization: ${header.organization}`);
  doc.text(`Period: ${isoTime(header.periodStart)} to ${isoTime(header.periodEnd)} (${header.timezone}, by ${header.granularity})`);
  doc.text(`Generated: ${isoTime(header.generatedAt)}`);
  if (header.description) doc.moveDown(0.3).text(header.description);
  doc.moveDown();

  drawChart(doc, header, rows);
  drawTable(doc, header, columns.filter((c) => c !== 'workflow_id'), rows);
  doc.end();
  await done;
}

function drawChart(doc: PDFKit.PDFDocument, header: PdfReportHeader, rows: readonly ReportRow[]): void {
  // Totals per bucket across the groups, in time order.
  const totals = new Map<number, { executions: number; successful: number; failed: number }>();
  for (const row of rows) {
    const t = totals.get(row.bucket.getTime()) ?? { executions: 0, successful: 0, failed: 0 };
    t.executions += row.total_executions;
    t.successful += row.successful_executions;
    t.failed += row.failed_executions;
    totals.set(row.bucket.getTime(), t);
  }
  const buckets = [...totals.entries()].sort((a, b) => a[0] - b[0]);
  const width = doc.page.width - 2 * MARGIN;
  const height = 160;
  const top = doc.y + 14;
  doc.font('Helvetica-Bold').fontSize(11).text('Executions (bars) and success rate (line) per bucket', MARGIN, doc.y);
  doc.rect(MARGIN, top, width, height).lineWidth(0.5).strokeColor('#999999').stroke();
  if (buckets.length === 0) {
    doc.font('Helvetica').fontSize(10).fillColor('#000000').text('No executions in the period', MARGIN + 10, top + height / 2);
  } else {
    const max = Math.max(1, ...buckets.map(([, t]) => t.executions));
    const step = width / buckets.length;
    buckets.forEach(([, t], i) => {
      const h = (t.executions / max) * (height - 10);
      if (h > 0) doc.rect(MARGIN + i * step + step * 0.1, top + height - h, Math.max(step * 0.8, 0.3), h).fillColor('#4a7bd0').fill();
    });
    let started = false;
    buckets.forEach(([, t], i) => {
      const finished = t.successful + t.failed;
      if (finished === 0) return;
      const x = MARGIN + i * step + step / 2;
      const y = top + height - (t.successful / finished) * (height - 10);
      if (!started) doc.moveTo(x, y);
      else doc.lineTo(x, y);
      started = true;
    });
    if (started) doc.lineWidth(1.5).strokeColor('#d04a4a').stroke();
    doc.fillColor('#000000').font('Helvetica').fontSize(8);
    doc.text(`max ${max}`, MARGIN + 4, top + 4);
    doc.text('100%', MARGIN + width - 30, top + 4);
  }
  doc.fillColor('#000000').strokeColor('#000000');
  doc.x = MARGIN;
  doc.y = top + height + 16;
}

function drawTable(doc: PDFKit.PDFDocument, header: PdfReportHeader, columns: readonly string[], rows: readonly ReportRow[]): void {
  const width = doc.page.width - 2 * MARGIN;
  const colWidth = width / columns.length;
  const lineHeight = 13;
  const bottom = () => doc.page.height - MARGIN - lineHeight;
  const headerRow = () => {
    doc.font('Helvetica-Bold').fontSize(8);
    columns.forEach((c, i) => doc.text(LABELS[c] ?? c, MARGIN + i * colWidth, doc.y, { width: colWidth - 4, lineBreak: false, continued: false, height: lineHeight }));
    doc.y += lineHeight;
    doc.moveTo(MARGIN, doc.y - 2).lineTo(MARGIN + width, doc.y - 2).lineWidth(0.5).stroke();
    doc.font('Helvetica').fontSize(8);
  };
  const at = (y: number) => (doc.y = y);
  headerRow();
  for (const row of rows) {
    if (doc.y > bottom()) {
      doc.addPage();
      at(MARGIN);
      headerRow();
    }
    const y = doc.y;
    columns.forEach((c, i) => doc.text(cell(row, c, header), MARGIN + i * colWidth, y, { width: colWidth - 4, lineBreak: false, ellipsis: true, height: lineHeight }));
    at(y + lineHeight);
  }
  if (rows.length === 0) doc.text('No rows', MARGIN, doc.y);
}

export type { ReportMetric };
