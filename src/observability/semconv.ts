/**
 * The OpenTelemetry semantic-convention attribute names the service records. Written out here
 * rather than imported: the package's index loads every convention (about 1 MiB of heap in an idle
 * service). test/unit/src/observability/semconv.test.ts checks each against the package.
 */
export const ATTR_HTTP_REQUEST_METHOD = 'http.request.method';
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
export const ATTR_HTTP_ROUTE = 'http.route';
export const ATTR_SERVICE_NAME = 'service.name';
export const ATTR_SERVICE_VERSION = 'service.version';
export const ATTR_URL_PATH = 'url.path';
/** Incubating (not in the package's stable export). */
export const ATTR_DEPLOYMENT_ENVIRONMENT_NAME = 'deployment.environment.name';
