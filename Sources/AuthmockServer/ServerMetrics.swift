public import Prometheus

/// Prometheus metrics of one mock, served at `GET /metrics`. A registry per
/// server instance (not the process-wide swift-metrics bootstrap), so the
/// many servers of a test run or a scenario run count separately.
public final class ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()

    /// Called once per journaled request.
    func record(_ entry: JournalEntry) {
        registry.makeCounter(
            name: "authmock_requests_total", labels: [("kind", entry.kind.rawValue), ("status", String(entry.status))],
            help: "Requests by route kind and answer status (0: no answer)."
        ).increment()
        if entry.issuedAccess != nil {
            registry.makeCounter(name: "authmock_tokens_issued_total", labels: [("type", "access")], help: "Tokens issued by type.").increment()
        }
        if entry.issuedRefresh != nil {
            registry.makeCounter(name: "authmock_tokens_issued_total", labels: [("type", "refresh")], help: "Tokens issued by type.").increment()
        }
        if entry.kind == .refresh {
            let outcome = (200..<300).contains(entry.status) ? "ok" : "failed"
            registry.makeCounter(name: "authmock_refreshes_total", labels: [("outcome", outcome)], help: "Refresh requests by outcome.").increment()
        }
        if entry.refreshToken?.state == .rotatedReuse {
            registry.makeCounter(name: "authmock_reuse_detections_total", help: "Rotated refresh tokens presented again (each revokes a login).").increment()
        }
        if let fault = entry.fault {
            registry.makeCounter(name: "authmock_faults_fired_total", labels: [("rule", String(fault))], help: "Fault rule firings by rule id.").increment()
        }
    }

    /// The Prometheus text exposition format.
    public func exposition() -> String { registry.emitToString() }
}
