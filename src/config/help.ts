/** `--help` text, generated from the option table. Pure. */
import { OPTIONS } from './options.js';

export function renderHelp(version: string): string {
  const lines = [
    `image-build-service ${version}`,
    '',
    'Usage: image-build-service [options]',
    '',
    'Every option resolves: flag > environment variable > settings file > default.',
    'Flags take `--flag value` or `--flag=value`; booleans `--flag` or `--flag=true|false`;',
    'lists are comma-separated. Environment booleans are exactly true or false; an empty',
    'environment value means unset.',
    '',
    'Options:',
  ];
  for (const option of OPTIONS) {
    const values = option.values ? ` (${option.values.join('|')})` : '';
    lines.push(`  ${option.flag}${option.placeholder ? ` ${option.placeholder}` : ''}${values}`);
    lines.push(`      ${option.description.replace(/`/g, '')}`);
    lines.push(
      `      env: ${option.env}   settings: ${option.settingsKey ?? 'none'}   default: ${option.defaultText.replace(/`/g, '')}`,
    );
  }
  lines.push('  --help, -h');
  lines.push('      Print this help and exit.');
  lines.push('  --version');
  lines.push('      Print the version and exit.');
  lines.push('');
  lines.push('Settings file keys also include gitCredentials.entries (list of {host, kind: https|ssh,');
  lines.push('port?, username+token | privateKey [+ pinnedHostKey]}) and registryMapping.rules (list of');
  lines.push('{registry, hostMatch?, pathPrefix?}) and buildSecrets.entries (list of {id, value | file,');
  lines.push('repositories: [{host, pathPrefix?}]}). Ambient registry auth: $DOCKER_CONFIG/config.json');
  lines.push('(default ~/.docker/config.json).');
  return `${lines.join('\n')}\n`;
}
