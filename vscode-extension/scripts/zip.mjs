// Just enough of the zip format to list a .vsix or a wheel and read one entry
// from it (stored or deflated; no zip64: a .vsix stays far below 4 GB).
import zlib from 'node:zlib';

function endOfCentralDirectory(buf) {
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) return i;
  }
  throw new Error('not a zip file (no end of central directory)');
}

/** Entries of a zip held in `buf`: [{ name, method, compressedSize, offset }]. */
export function zipEntries(buf) {
  const end = endOfCentralDirectory(buf);
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const entries = [];
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = buf.readUInt16LE(at + 10);
    const compressedSize = buf.readUInt32LE(at + 20);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const offset = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
    entries.push({ name, method, compressedSize, offset });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** The bytes of one entry (as listed by zipEntries) of the zip in `buf`. */
export function zipRead(buf, entry) {
  const at = entry.offset;
  if (buf.readUInt32LE(at) !== 0x04034b50) throw new Error(`corrupt zip local header for ${entry.name}`);
  const start = at + 30 + buf.readUInt16LE(at + 26) + buf.readUInt16LE(at + 28);
  const data = buf.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return data;
  if (entry.method === 8) return zlib.inflateRawSync(data);
  throw new Error(`unsupported zip compression ${entry.method} for ${entry.name}`);
}
