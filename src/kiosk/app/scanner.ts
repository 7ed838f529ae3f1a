/**
 * The tablet's camera as a QR code reader (decision 0053). The rear camera when there is one; the
 * platform's `BarcodeDetector` where it reads QR codes (Android, ChromeOS, macOS), jsQR otherwise
 * (Chromium on Linux and Windows, Firefox). jsQR is loaded on first use, from the kiosk's own build
 * (the service worker precaches every built file, so it loads offline too). Frames are read in memory
 * and dropped: nothing is sent, drawn anywhere but the preview, or kept.
 */

/** The slice of the Barcode Detection API this file uses (absent from TypeScript's DOM library). */
interface DetectedBarcode {
  readonly rawValue: string;
}
interface BarcodeDetectorInstance {
  detect(source: HTMLVideoElement): Promise<ReadonlyArray<DetectedBarcode>>;
}
interface BarcodeDetectorClass {
  new (options: { readonly formats: ReadonlyArray<string> }): BarcodeDetectorInstance;
  getSupportedFormats(): Promise<ReadonlyArray<string>>;
}
declare global {
  // Declared as possibly undefined: most browsers have none, and the code below asks first.
  var BarcodeDetector: BarcodeDetectorClass | undefined;
}

/** Why the camera could not start: the person or the tablet's policy said no, or there is none. */
export type CameraProblem = 'CAMERA_REFUSED' | 'CAMERA_ABSENT';

export interface Scanner {
  /** Which decoder reads the frames (shown to nobody; kept on the overlay for tests and support). */
  readonly decoder: 'platform' | 'jsqr';
  /** Stops reading and turns the camera off (its light goes out); safe to call twice. */
  stop(): void;
}

/** Between two reads: about seven a second, which reads a card held still at once and leaves the CPU idle. */
const READ_EVERY_MS = 150;
/** jsQR reads frames no wider than this: a card that fills a fifth of the picture still has 4 px a module. */
const JSQR_MAX_WIDTH = 800;

/** A decoder of the current video frame: the text of the QR code it sees, if any. */
type ReadFrame = (video: HTMLVideoElement) => Promise<string | undefined>;

const platformReader = async (): Promise<ReadFrame | undefined> => {
  const Detector = globalThis.BarcodeDetector;
  if (Detector === undefined) return undefined;
  try {
    if (!(await Detector.getSupportedFormats()).includes('qr_code')) return undefined;
    const detector = new Detector({ formats: ['qr_code'] });
    return async (video) => (await detector.detect(video))[0]?.rawValue;
  } catch {
    // A detector that exists but cannot start (no platform service behind it) is as good as none.
    return undefined;
  }
};

const jsqrReader = async (): Promise<ReadFrame> => {
  const { default: jsQR } = await import('jsqr');
  const canvas = document.createElement('canvas');
  const context = canvas.getContext('2d', { willReadFrequently: true });
  return async (video) => {
    if (context === null || video.videoWidth === 0) return undefined;
    const scale = Math.min(1, JSQR_MAX_WIDTH / video.videoWidth);
    const width = Math.round(video.videoWidth * scale);
    const height = Math.round(video.videoHeight * scale);
    if (canvas.width !== width) canvas.width = width;
    if (canvas.height !== height) canvas.height = height;
    context.drawImage(video, 0, 0, width, height);
    const pixels = context.getImageData(0, 0, width, height);
    // A printed card is dark on light: the inverted pass would only double the work.
    return jsQR(pixels.data, width, height, { inversionAttempts: 'dontInvert' })?.data;
  };
};

const cameraProblemOf = (error: unknown): CameraProblem =>
  error instanceof DOMException && (error.name === 'NotAllowedError' || error.name === 'SecurityError')
    ? 'CAMERA_REFUSED'
    : 'CAMERA_ABSENT';

/**
 * Shows the camera in `video` and calls `onText` with each QR code's text it reads (the same text again
 * only after another was read or none was seen, so a card held in front of the camera is one reading).
 * Answers the running scanner, or why the camera could not start (the lookup is then the way).
 */
export const startScanner = async (
  video: HTMLVideoElement,
  onText: (text: string) => void,
): Promise<Scanner | CameraProblem> => {
  if (navigator.mediaDevices?.getUserMedia === undefined) return 'CAMERA_ABSENT';
  let stream: MediaStream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({
      audio: false,
      // `ideal`: a tablet's rear camera faces the card; a laptop's only camera is taken all the same.
      video: { facingMode: { ideal: 'environment' }, width: { ideal: 1280 }, height: { ideal: 720 } },
    });
  } catch (error) {
    return cameraProblemOf(error);
  }
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = (): void => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    for (const track of stream.getTracks()) track.stop();
    video.srcObject = null;
  };
  video.muted = true;
  video.playsInline = true;
  video.srcObject = stream;
  try {
    await video.play();
  } catch {
    // Autoplay of a muted video is allowed; a failure here means the stream ended already.
  }
  const platform = await platformReader();
  const read = platform ?? (await jsqrReader());
  let last: string | undefined;
  const tick = async (): Promise<void> => {
    if (stopped) return;
    let text: string | undefined;
    try {
      text = await read(video);
    } catch {
      text = undefined;
    }
    if (stopped) return;
    if (text !== undefined && text !== last) onText(text);
    last = text;
    timer = setTimeout(() => void tick(), READ_EVERY_MS);
  };
  void tick();
  return { decoder: platform === undefined ? 'jsqr' : 'platform', stop };
};
