/**
 * The uploader of something, as responses show it: (iss, sub) and whether the user was removed,
 * never an email address.
 */
export interface UploaderRefView {
  iss: string;
  sub: string;
  removed: boolean;
}

/** SQL joining the uploader's user row as `u` to a source aliased `s` with uploader_iss/uploader_sub. */
export const UPLOADER_JOIN = 'left join app_user u on u.iss = s.uploader_iss and u.sub = s.uploader_sub';

/** From a row with uploader_iss, uploader_sub and the user's removed_datetime (null when active). */
export function uploaderRef(row: { uploader_iss: string; uploader_sub: string; removed_datetime?: Date | string | null }): UploaderRefView {
  return { iss: row.uploader_iss, sub: row.uploader_sub, removed: row.removed_datetime != null };
}
