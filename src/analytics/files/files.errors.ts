import { DomainError } from '../../common/errors/domain-error.js';
import type { FileKind } from './files.repository.js';

const NAMES: Record<FileKind, { code: string; label: string }> = {
  report: { code: 'REPORT', label: 'Report' },
  export: { code: 'EXPORT', label: 'Export' },
};

export class FileNotFoundError extends DomainError {
  constructor(kind: FileKind) {
    super(`${NAMES[kind].code}_NOT_FOUND`, 404, `${NAMES[kind].label} not found`);
  }
}

/** The file is still being made, or its generation failed. */
export class FileNotReadyError extends DomainError {
  constructor(kind: FileKind, failed: boolean) {
    super(
      `${NAMES[kind].code}_NOT_READY`,
      409,
      failed ? `${NAMES[kind].label} generation failed; see its error and request it again` : `${NAMES[kind].label} is not ready yet; see estimated_completion`,
    );
  }
}

export class FileExpiredError extends DomainError {
  constructor(kind: FileKind) {
    super(`${NAMES[kind].code}_EXPIRED`, 410, `${NAMES[kind].label} file has expired; request it again`);
  }
}

export class InvalidMetricsError extends DomainError {
  constructor(message: string) {
    super('INVALID_METRICS', 400, message, { field: 'metrics' });
  }
}
