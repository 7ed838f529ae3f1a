/** Every route the service serves. Router, authorisation and the OpenAPI document all read this list. */
import type { Route } from './route.js';
import { openApiRoute } from './routes/openApiRoute.js';
import { healthRoute, licenseRoute, securityTxtRoute } from './routes/systemRoutes.js';

export const routes: ReadonlyArray<Route> = [healthRoute, licenseRoute, securityTxtRoute, openApiRoute];
