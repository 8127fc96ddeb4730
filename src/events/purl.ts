/**
 * Package URLs of images (purl, type `oci`): `pkg:oci/<last name part>@<digest>?repository_url=
 * <registry>/<name>&tag=<tag>`, the artifact id CDEvents gives an image. Pure.
 */
import { ImageTarget } from '../rules/image-target.js';

export interface ImageParts {
  readonly registry: string;
  readonly name: string;
  readonly digest: string;
  readonly tag?: string;
}

export function ociPurl(image: ImageParts): string {
  const last = (image.name.split('/').at(-1) ?? image.name).toLowerCase();
  const qualifiers = [`repository_url=${ImageTarget.of(image).repository}`];
  if (image.tag !== undefined) qualifiers.push(`tag=${encodeURIComponent(image.tag)}`);
  return `pkg:oci/${encodeURIComponent(last)}@${encodeURIComponent(image.digest)}?${qualifiers.join('&')}`;
}
