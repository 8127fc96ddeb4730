/**
 * The routes of people's sign-in (docs/auth.md), mounted only when `auth.browser` is configured:
 * GET /auth/login sends the browser to the provider, GET /auth/callback starts the session and
 * sets its cookies, POST /auth/logout ends it, GET /auth/session tells the pages whether they
 * have one. A thin adapter: src/auth/people.ts decides everything, this sets cookies and answers.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { AccessControl } from '../auth/access.js';
import type { PeopleSignIn } from '../auth/people.js';
import { ProviderUnavailable, SignInRefused } from '../auth/provider-client.js';
import {
  CSRF_COOKIE,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  SIGN_IN_SECONDS,
  cookieOf,
  setCookie,
} from '../auth/session-cookies.js';
import { isLoopbackHttp } from '../config/auth.js';
import type { Config } from '../config/types.js';
import { serviceError } from '../errors/errors.js';
import { accessRequest } from './access.js';
import { requestScope } from './request-id.js';

const SIGN_IN_PATH = '/auth/';

/** The provider's outage or refusal as the service's error. */
function answerOf(err: unknown, issuer: string): unknown {
  if (err instanceof SignInRefused) return serviceError('SIGN_IN_REFUSED', { reason: err.reason });
  if (err instanceof ProviderUnavailable) return serviceError('ISSUER_UNAVAILABLE', { issuer });
  return err;
}

function noStore(koaCtx: Context): void {
  koaCtx.set('Cache-Control', 'no-store');
}

function callbackRoute(people: PeopleSignIn, secure: boolean) {
  return async (koaCtx: Context): Promise<void> => {
    noStore(koaCtx);
    const clearSignIn = setCookie(SIGN_IN_COOKIE, '', {
      secure,
      httpOnly: true,
      path: SIGN_IN_PATH,
      maxAge: 0,
    });
    koaCtx.append('Set-Cookie', clearSignIn);
    let started;
    try {
      const query = new URLSearchParams(koaCtx.querystring);
      started = await people.finish(query, cookieOf(koaCtx.get('cookie'), SIGN_IN_COOKIE));
    } catch (err) {
      requestScope(koaCtx).logger.info(
        { reason: err instanceof Error ? err.message : 'unknown' },
        'a sign-in was refused',
      );
      throw answerOf(err, people.issuerName);
    }
    const maxAge = (started.endsAt - Date.now()) / 1000;
    koaCtx.append(
      'Set-Cookie',
      setCookie(SESSION_COOKIE, started.sessionId, { secure, httpOnly: true, path: '/', maxAge }),
    );
    koaCtx.append(
      'Set-Cookie',
      setCookie(CSRF_COOKIE, started.csrfToken, { secure, httpOnly: false, path: '/', maxAge }),
    );
    requestScope(koaCtx).logger.info(
      {
        person: { issuer: started.session.issuerName, subject: started.session.subject },
        endsAt: new Date(started.endsAt).toISOString(),
      },
      'a person signed in',
    );
    koaCtx.redirect(started.returnTo);
  };
}

/** The routes, or undefined when people's sign-in is not configured (every /auth/ path is then a 404). */
export function createAuthRouter(ctx: {
  readonly access: AccessControl;
  readonly config: Pick<Config, 'auth'>;
}): Router | undefined {
  const people = ctx.access.people;
  const redirectUrl = ctx.config.auth.browser.redirectUrl;
  if (people === undefined || redirectUrl === undefined) return undefined;
  const secure = !isLoopbackHttp(redirectUrl);
  const router = new Router();
  router.get('/auth/login', async (koaCtx) => {
    noStore(koaCtx);
    const returnTo = typeof koaCtx.query.returnTo === 'string' ? koaCtx.query.returnTo : undefined;
    const start = await people.begin(returnTo).catch((err: unknown) => {
      throw answerOf(err, people.issuerName);
    });
    koaCtx.append(
      'Set-Cookie',
      setCookie(SIGN_IN_COOKIE, start.cookie, {
        secure,
        httpOnly: true,
        path: SIGN_IN_PATH,
        maxAge: SIGN_IN_SECONDS,
      }),
    );
    koaCtx.redirect(start.location);
  });
  router.get('/auth/callback', callbackRoute(people, secure));
  router.post('/auth/logout', async (koaCtx) => {
    noStore(koaCtx);
    await ctx.access.endSession(accessRequest(koaCtx));
    for (const [name, httpOnly] of [
      [SESSION_COOKIE, true],
      [CSRF_COOKIE, false],
    ] as const)
      koaCtx.append('Set-Cookie', setCookie(name, '', { secure, httpOnly, path: '/', maxAge: 0 }));
    koaCtx.status = 204;
  });
  router.get('/auth/session', async (koaCtx) => {
    noStore(koaCtx);
    const session = await ctx.access.sessionOf(accessRequest(koaCtx));
    koaCtx.body =
      session === undefined
        ? { signedIn: false }
        : {
            signedIn: true,
            issuer: session.issuerName,
            subject: session.subject,
            endsAt: new Date(session.endsAt).toISOString(),
          };
  });
  return router;
}
