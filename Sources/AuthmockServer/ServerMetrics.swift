import AuthmockModel
public import Prometheus
import Synchronization

/// Prometheus metrics of one mock, served at `GET /metrics`. A registry per
/// server instance (not the process-wide swift-metrics bootstrap), so the
/// many servers of a test run or a scenario run count separately.
public final class ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()

    /// The counters an entry can touch, by what names them.
    private enum CounterKey: Hashable {
        case requests(RouteKind, status: Int)
        case issued(access: Bool)
        case refreshes(ok: Bool)
        case reuseDetections
        case faults(rule: Int)
    }
    /// Counters made so far. The registry would hand back the same counter
    /// for the same name and labels, but only after validating the name and
    /// building the label strings: per request that showed in the dialect.
    private let counters = Mutex<[CounterKey: Counter]>([:])

    private func counter(_ key: CounterKey) -> Counter {
        if let known = counters.withLock({ $0[key] }) { return known }
        let made: Counter =
            switch key {
            case .requests(let kind, let status):
                registry.makeCounter(
                    descriptor: .init(
                        metricName: "authmock_requests", unitName: "total", helpText: "Requests by route kind and answer status (0: no answer)."),
                    labels: [("kind", kind.rawValue), ("status", String(status))])
            case .issued(let access):
                registry.makeCounter(
                    descriptor: .init(metricName: "authmock_tokens_issued", unitName: "total", helpText: "Tokens issued by type."),
                    labels: [("type", access ? "access" : "refresh")])
            case .refreshes(let ok):
                registry.makeCounter(
                    descriptor: .init(metricName: "authmock_refreshes", unitName: "total", helpText: "Refresh requests by outcome."),
                    labels: [("outcome", ok ? "ok" : "failed")])
            case .reuseDetections:
                registry.makeCounter(
                    descriptor: .init(
                        metricName: "authmock_reuse_detections", unitName: "total",
                        helpText: "Rotated refresh tokens presented again (each revokes a login)."))
            case .faults(let rule):
                registry.makeCounter(
                    descriptor: .init(metricName: "authmock_faults_fired", unitName: "total", helpText: "Fault rule firings by rule id."),
                    labels: [("rule", String(rule))])
            }
        counters.withLock { $0[key] = made }
        return made
    }

    /// Called once per journaled request.
    func record(_ entry: JournalEntry) {
        counter(.requests(entry.kind, status: entry.status)).increment()
        if entry.issuedAccessID != nil { counter(.issued(access: true)).increment() }
        if entry.issuedRefreshID != nil { counter(.issued(access: false)).increment() }
        if entry.kind == .refresh { counter(.refreshes(ok: (200..<300).contains(entry.status))).increment() }
        if entry.refreshToken?.state == .rotatedReuse { counter(.reuseDetections).increment() }
        if let fault = entry.fault { counter(.faults(rule: fault)).increment() }
    }

    /// The Prometheus text exposition format.
    public func exposition() -> String { registry.emitToString() }
}
