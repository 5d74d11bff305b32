/**
 * Splits one CSV line (RFC 4180 quoting: a quoted field may hold commas and doubled quotes), as
 * S3 Inventory writes its reports and S3 Batch Operations its manifests and completion reports.
 *
 * @example
 * splitCsvLine('in,"a,b ""c""",'); // ['in', 'a,b "c"', '']
 */
export function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const at = line.indexOf('"', i);
        if (at < 0) {
          value += line.slice(i);
          i = line.length;
          break;
        }
        value += line.slice(i, at);
        if (line[at + 1] === '"') {
          value += '"';
          i = at + 2;
        } else {
          i = at + 1;
          break;
        }
      }
      fields.push(value);
      i++; // the comma
    } else {
      const at = line.indexOf(',', i);
      const end = at < 0 ? line.length : at;
      fields.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return fields;
}
