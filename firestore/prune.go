package firestore

// Expiry. The driver implements no driver.Pruner: receipts, delete
// tombstones and history entries carry their expiry in the field expiresAt
// (fExpiresAt), and a Firestore TTL policy on that field, which the
// operator enables once (see README.md), deletes them.
