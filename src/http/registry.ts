/** Every route the service serves. Router, authorisation and the OpenAPI document all read this list. */
import type { Route } from './route.js';
import { attendanceRoutes } from './routes/attendanceRoutes.js';
import { auditRoutes } from './routes/auditRoutes.js';
import { authRoutes } from './routes/authRoutes.js';
import { backupRoutes } from './routes/backupRoutes.js';
import { checkinRoutes } from './routes/checkinRoutes.js';
import { classesRoutes } from './routes/classesRoutes.js';
import { consentsRoutes } from './routes/consentsRoutes.js';
import { familyPassRoutes } from './routes/familyPassRoutes.js';
import { importsRoutes } from './routes/importsRoutes.js';
import { notificationRoutes } from './routes/notificationRoutes.js';
import { openApiRoute } from './routes/openApiRoute.js';
import { pageRoutes } from './routes/pageRoutes.js';
import { photosRoutes } from './routes/photosRoutes.js';
import { pickupRoutes } from './routes/pickupRoutes.js';
import { printAgentRoutes } from './routes/printAgentRoutes.js';
import { printRoutes } from './routes/printRoutes.js';
import { reportsRoutes } from './routes/reportsRoutes.js';
import { retentionRoutes } from './routes/retentionRoutes.js';
import { rolesRoutes } from './routes/rolesRoutes.js';
import { schedulesRoutes } from './routes/schedulesRoutes.js';
import { seedRoute } from './routes/seedRoute.js';
import { studentsRoutes } from './routes/studentsRoutes.js';
import { syncRoutes } from './routes/syncRoutes.js';
import { healthRoute, licenseRoute, securityTxtRoute } from './routes/systemRoutes.js';
import { usersRoutes } from './routes/usersRoutes.js';
import { volunteersRoutes } from './routes/volunteersRoutes.js';

export const routes: ReadonlyArray<Route> = [
  healthRoute,
  licenseRoute,
  securityTxtRoute,
  openApiRoute,
  ...authRoutes,
  ...usersRoutes,
  ...rolesRoutes,
  ...classesRoutes,
  ...schedulesRoutes,
  ...studentsRoutes,
  ...importsRoutes,
  ...consentsRoutes,
  ...photosRoutes,
  ...familyPassRoutes,
  ...auditRoutes,
  ...backupRoutes,
  ...checkinRoutes,
  ...pageRoutes,
  ...volunteersRoutes,
  ...notificationRoutes,
  ...pickupRoutes,
  ...printRoutes,
  ...printAgentRoutes,
  ...attendanceRoutes,
  ...syncRoutes,
  ...reportsRoutes,
  ...retentionRoutes,
  seedRoute,
];
