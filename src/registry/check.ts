/** GET /image: does the tag's manifest exist? (HEAD, one round trip when warm) */
import type { RegistryCall, RegistryClient } from './client.js';
import { unexpectedAnswer } from './reference.js';

/** true on 200, false when the registry says the manifest is unknown (404); anything else throws. */
export async function imageExists(client: RegistryClient, call: RegistryCall): Promise<boolean> {
  const { status } = await client.headManifest(call, call.ref.tag);
  if (status === 200) return true;
  if (status === 404) return false;
  throw unexpectedAnswer(call.ref, status);
}
