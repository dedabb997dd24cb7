/** The API's largest page of visitors (service docs, 4.4: 1 ≤ limit ≤ 250). */
export const PAGE_LIMIT = 250;
/** Requests every report needs: each period's first page (with its totals), ≤ 14 chart points. */
export const CORE_REQUESTS = 16;
/** Default per-report request cap (VISITORS_MAX_REQUESTS). */
export const DEFAULT_MAX_REQUESTS = 20;
