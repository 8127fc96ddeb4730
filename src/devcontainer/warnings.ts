/**
 * Warnings of GET /devcontainer: one `{code, message}` per thing of the label that the
 * result does not represent faithfully. Codes are stable; messages are for people.
 */

export type WarningCode =
  | 'skipped_entry'
  | 'skipped_command'
  | 'unsubstituted_variable'
  | 'skipped_extension'
  | 'skipped_settings'
  | 'unexpected_type';

export interface DevcontainerWarning {
  code: WarningCode;
  message: string;
}

export const warning = (code: WarningCode, message: string): DevcontainerWarning => ({ code, message });
