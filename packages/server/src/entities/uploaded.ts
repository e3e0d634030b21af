import { p } from '@mikro-orm/core';

/** Columns shared by everything users upload and administrators review. */
export const reviewedColumns = () => ({
  status: p.text().default('on_review'),
  upload_datetime: p.datetime(),
  uploader_iss: p.text(),
  uploader_sub: p.text(),
});
