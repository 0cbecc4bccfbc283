// Package firestore is the Google Cloud Firestore driver for agentmem.
package firestore
