import { z } from 'zod';

// Field shapes shared by the custom resources. Each caller adds its own `.describe()`.

/**
 * Lowercase only: ids become SpiceDB object ids and conflict keys, which compare byte for byte, so
 * `ABC…` and `abc…` must not be two different users. Version and variant bits are not checked, ids
 * come from identity providers and other systems that do not all follow RFC 9562.
 */
export const LOWERCASE_UUID_PATTERN = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const LOWERCASE_UUID = new RegExp(`^${LOWERCASE_UUID_PATTERN}$`);

const MAX_ITEM_ID_LENGTH = 1024;
export const MAX_TYPE_NAME_LENGTH = 63;

export const uuidField = () =>
  z.string().regex(LOWERCASE_UUID, { error: 'Invalid UUID: expected lowercase 8-4-4-4-12 hex' }).meta({
    format: 'uuid',
  });

/** RFC 3339 date-time with `Z` or an offset; a time without a zone is ambiguous and rejected. */
export const dateTimeField = () =>
  z.iso.datetime({ offset: true, error: 'Invalid date-time: expected RFC 3339' });

export const itemIdField = () => z.string().min(1).max(MAX_ITEM_ID_LENGTH);

/** Item and access types: the complete sets are not fixed by the spec, so any short non-empty name. */
export const typeNameField = () => z.string().min(1).max(MAX_TYPE_NAME_LENGTH);
