import AuthmockModel
import Foundation

/// Calls recognised in traffic that carries no `X-Authmock-Call` (an app
/// judged with `--judge`, docs/proxy.md "Recognising a call's retries"):
/// an API request continues an earlier request's call when it asks for
/// the same method and path, by the same login where both carried a token
/// the journal knows, within `window` seconds after that request was
/// answered 401, 429 or 503 (what a client retries) and before any other
/// request continued it. Of several such, the one with the same body
/// digest is taken, else the earliest. Anything else starts a call.
enum RecognisedCalls {
    /// Seconds after an answer within which the same request counts as its retry.
    static let window = 30.0
    /// The answers a client sends a call again after.
    static let retried: Set<Int> = [401, 429, 503]

    /// seq -> the call it belongs to (`call-1`, `call-2`, ... in order of
    /// each call's first request), for API requests without the header.
    static func recognise(_ entries: [JournalEntry], labels: TokenLabels, isCallAttempt: (JournalEntry) -> Bool) -> [Int: String] {
        var out: [Int: String] = [:]
        var calls = 0
        // Calls whose last request was answered with a retried status, waiting for a retry: their last request.
        var open: [(call: String, last: JournalEntry)] = []
        for entry in entries.sorted(by: { $0.seq < $1.seq }) where entry.call == nil && isCallAttempt(entry) {
            // A call past the window is retried no more: the list stays as short as the window's traffic.
            open.removeAll { entry.realTime.timeIntervalSince(Observation.end($0.last)) > window }
            let login = labels.login(of: entry.accessToken?.id)
            let candidates = open.indices.filter { index in
                let last = open[index].last
                guard last.method == entry.method, last.path == entry.path, Observation.end(last) <= entry.realTime else { return false }
                let earlier = labels.login(of: last.accessToken?.id)
                return login == nil || earlier == nil || login == earlier
            }
            let chosen = candidates.first { open[$0].last.bodySHA256 == entry.bodySHA256 } ?? candidates.first
            let call: String
            if let chosen {
                call = open.remove(at: chosen).call
            } else {
                calls += 1
                call = "call-\(calls)"
            }
            out[entry.seq] = call
            if retried.contains(entry.status) { open.append((call, entry)) }
        }
        return out
    }
}
