/**
 * Whether a printer's settings hold together (0051): the URI's scheme is one its protocol speaks
 * (IPP over `ipp://` or `ipps://`, ZPL over `tcp://`), and its host is one PRINTER_HOSTS allows when
 * that is set (unless a print agent serves it, 0054). The codecs check each field alone; this checks them together, on a creation and on the
 * result of a change, and answers the issues a 400 lists.
 */
import type { ValidationIssue } from '../domain/issues.js';
import { type PrinterProtocol, printerAddress, schemesOf } from '../domain/printing.js';

export const printerIssues = (
  printer: { readonly protocol: PrinterProtocol; readonly uri: string; readonly agentId?: string },
  allowedHosts: ReadonlyArray<string>,
): ValidationIssue[] => {
  const address = printerAddress(printer.uri);
  if (address === undefined) return [{ path: 'body.uri', message: 'expected a printer URI' }];
  const issues: ValidationIssue[] = [];
  const schemes = schemesOf[printer.protocol];
  if (!schemes.includes(address.scheme)) {
    issues.push({
      path: 'body.uri',
      message: `protocol ${printer.protocol} takes a ${schemes.map((s) => `${s}://`).join(' or ')} URI`,
    });
  }
  // A printer an agent serves (0054) is reached from the agent's network, never from this service.
  if (printer.agentId === undefined && allowedHosts.length > 0 && !allowedHosts.includes(address.host)) {
    issues.push({ path: 'body.uri', message: 'the host is not one PRINTER_HOSTS allows' });
  }
  return issues;
};
