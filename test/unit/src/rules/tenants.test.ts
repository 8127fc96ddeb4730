// Whose a build is: the repository's owner, the same whether read from a plan or from the
// repository as a request gave it (a record made without the tenant its queue named).
import test from 'ava';
import { repositoryTenant, tenantOf } from '../../../../src/rules/tenants.js';

test('a repository names the same tenant as its plan: the first path segment, else the host', (t) => {
  const cases: [string, { host: string; path: string }, string][] = [
    [
      'https://git.example.com/team-a/app.git',
      { host: 'git.example.com', path: '/team-a/app.git' },
      'team-a',
    ],
    [
      'https://git.example.com:8443/team-b/sub/app',
      { host: 'git.example.com', path: '/team-b/sub/app' },
      'team-b',
    ],
    ['git@git.example.com:team-c/app.git', { host: 'git.example.com', path: 'team-c/app.git' }, 'team-c'],
    ['ssh://git@git.example.com/mono.git', { host: 'git.example.com', path: '/mono.git' }, 'mono'],
    ['https://git.example.com/', { host: 'git.example.com', path: '/' }, 'git.example.com'],
  ];
  for (const [repository, url, tenant] of cases) {
    t.is(repositoryTenant(repository), tenant, repository);
    t.is(tenantOf({ url }), tenant, repository);
  }
  t.is(repositoryTenant('not a url'), 'unknown');
});
