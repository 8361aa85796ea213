import DriverKit
import Foundation
import Testing

/// DriverKit's side of the `cancel` extension, over `Driver.serve(lines:)`:
/// a cancel stops the call's task and is answered at once; the call answers
/// `cancelled` (its client saw the cancellation as a transport error); a
/// call that ended first keeps its answer; a cancel of no running call is
/// answered and changes nothing.
struct DriverKitCancelTests {
    /// A client whose `/slow` calls wait 10 s unless cancelled, reporting a
    /// cancellation as an HTTP client does: a transport error.
    struct WaitingClient: DriverClient {
        func login(username: String, password: String) async -> DriverOutcome { DriverOutcome(.ok) }
        func request(_ request: DriverRequest) async -> DriverOutcome {
            guard request.path == "/slow" else { return .ok(status: 200, body: "") }
            do {
                try await Task.sleep(for: .seconds(10))
                return .ok(status: 200, body: "")
            } catch {
                return DriverOutcome(.transportError, message: "\(error)")
            }
        }
    }

    @Test func aCancelStopsTheCallAndItAnswersCancelled() async throws {
        let lines = [
            #"{"id":"0","op":"hello","protocol":1,"baseURL":"http://127.0.0.1:1","profile":"oauth2","clientId":"demo","clientSecret":""}"#,
            #"{"id":"1","op":"request","method":"GET","path":"/fast","headers":{}}"#,
            #"{"id":"2","op":"request","method":"GET","path":"/slow","headers":{}}"#,
            #"{"id":"3","op":"cancel","call":"2"}"#,
            #"{"id":"4","op":"cancel","call":"99"}"#,
            #"{"id":"5","op":"shutdown"}"#,
        ]
        let answers = Answers()
        let started = ContinuousClock.now
        let identity = DriverIdentity(name: "cancel-test", version: "1", profiles: ["oauth2"], capabilities: [Capability.cancel])
        let end = await Driver.serve(lines: lines.async, identity: identity, makeClient: { _ in WaitingClient() }) { await answers.add($0) }
        #expect(end == .shutDown)
        #expect(ContinuousClock.now - started < .seconds(5), "the cancelled call waited out its 10 s")
        let byID = await answers.byID
        #expect(byID["1"]?.outcome == .ok)
        #expect(byID["2"]?.outcome == .cancelled, "\(String(describing: byID["2"]))")
        #expect(byID["3"]?.ok == true)
        #expect(byID["4"]?.ok == true && byID["4"]?.message?.contains("no call 99") == true)
        let order = await answers.ids
        #expect(order.firstIndex(of: "3") ?? 9 < order.firstIndex(of: "2") ?? 0, "the cancel is answered before the call it cancels: \(order)")
    }

    actor Answers {
        var byID: [String: DriverMessage] = [:]
        var ids: [String] = []
        func add(_ line: String) {
            guard let answer = try? JSONDecoder().decode(DriverMessage.self, from: Data(line.utf8)) else { return }
            byID[answer.id] = answer
            ids.append(answer.id)
        }
    }
}

extension Array where Element == String {
    /// The lines as a sequence `Driver.serve(lines:)` reads.
    fileprivate var async: AsyncStream<String> {
        AsyncStream { continuation in
            for line in self { continuation.yield(line) }
            continuation.finish()
        }
    }
}
