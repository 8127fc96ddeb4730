/**
 * The one Ajv instance: the settings and option files, the POST /build body and the query
 * strings all compile their schemas here, under the same options. Strict (a schema Ajv cannot
 * check fully is a programming error) and every failure reported, so a 400 or a startup error
 * can name each bad field at once. Formats are added by the module that owns their rule.
 */
import { Ajv } from 'ajv';

export const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false });
