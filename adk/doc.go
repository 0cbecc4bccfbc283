// Package adk adapts agentmem memory to Google ADK Go (google.golang.org/adk/v2).
package adk
