import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import TestSupport
import Testing

/// PostgreSQL frozen (SIGSTOP: it accepts connections and never answers) and
/// stopped, under load, through the real binary (issue 35, item 4): every
/// request meanwhile is a 503 within about a second, everything answers again
/// once the database does, no rotation is lost or doubled, and SIGTERM ends
/// the server. Needs the database scripts/test.sh starts (AUTHMOCK_TEST_POSTGRES_DIR).
/// Nested in `PostgresStateTests` (serialized): it freezes the database the
/// other PostgreSQL tests use, so none of them may run beside it.
extension PostgresStateTests {
    @Suite(.enabled(if: ProcessInfo.processInfo.environment["AUTHMOCK_TEST_POSTGRES_DIR"] != nil))
    struct DatabaseOutageTests {
        var url: String { ProcessInfo.processInfo.environment["AUTHMOCK_TEST_POSTGRES_URL"] ?? "" }
        var directory: String { ProcessInfo.processInfo.environment["AUTHMOCK_TEST_POSTGRES_DIR"] ?? "" }

        /// One answer seen by the load: what, when it was sent, how long it took.
        struct Answer: Sendable {
            var what: String
            var status: Int
            var sent: Double
            var took: Double
        }

        @Test(arguments: ["freeze", "stop"])
        func anOutageIsAFast503AndNothingIsLost(outage: String) async throws {
            let server = try ServingBinary(["--state", url, "--log-level", "critical"])
            _ = try await server.withClient { try await $0.post("/_authmock/reset", body: ByteBuffer()) }
            let login = try await server.withClient { try await $0.form("/oauth/token", "grant_type=password&username=alice&password=wonderland") }
                .json()
            let access = try #require(login["access_token"] as? String)
            let record = LoadRecord(refresh: try #require(login["refresh_token"] as? String))

            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            let start = ContinuousClock.now
            let elapsed: @Sendable () -> Double = {
                let since = (ContinuousClock.now - start).components
                return Double(since.seconds) + Double(since.attoseconds) / 1e18
            }
            @Sendable func send(
                _ what: String, _ method: HTTPMethod, _ path: String, body: String? = nil, bearer: String? = nil
            ) async -> (Int, ByteBuffer) {
                var request = HTTPClientRequest(url: server.baseURL + path)
                request.method = method
                if let body {
                    request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                    request.headers.add(name: "Authorization", value: "Basic " + Data("demo:demo-secret".utf8).base64EncodedString())
                    request.body = .bytes(ByteBuffer(string: body))
                }
                if let bearer { request.headers.add(name: "Authorization", value: "Bearer " + bearer) }
                let sent = elapsed()
                var status = -1
                var bytes = ByteBuffer()
                if let response = try? await http.execute(request, timeout: .seconds(90)) {
                    status = Int(response.status.code)
                    bytes = (try? await response.body.collect(upTo: 1 << 16)) ?? ByteBuffer()
                }
                let answer = Answer(what: what, status: status, sent: sent, took: elapsed() - sent)
                record.answers.withLock { $0.append(answer) }
                return (status, bytes)
            }
            let load = Task {
                await withTaskGroup(of: Void.self) { group in
                    // One client refreshing in a chain, as an app does, and readers beside it.
                    group.addTask {
                        while record.running.load(ordering: .relaxed) {
                            let presented = record.chain.withLock { $0.refresh }
                            let (status, body) = await send(
                                "refresh", .POST, "/oauth/token", body: "grant_type=refresh_token&refresh_token=\(presented)")
                            if status == 200, let json = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
                                let next = json["refresh_token"] as? String
                            {
                                record.chain.withLock {
                                    $0.refresh = next; $0.rotations += 1
                                }
                            } else if status != 503 {
                                record.chain.withLock { $0.refused.append("\(status) \(String(buffer: body))") }
                            }
                            try? await Task.sleep(for: .milliseconds(20))
                        }
                    }
                    for (what, path) in [("me", "/api/me"), ("health", "/health"), ("me", "/api/me")] {
                        group.addTask {
                            while record.running.load(ordering: .relaxed) {
                                _ = await send(what, .GET, path, bearer: what == "me" ? access : nil)
                                try? await Task.sleep(for: .milliseconds(20))
                            }
                        }
                    }
                }
            }
            try await Task.sleep(for: .seconds(1))
            let down = elapsed()
            try postgres(outage)
            // Five seconds: a request caught in a COMMIT when the database
            // froze waits for it (the truth), one begun just before waits out
            // two deadlines; the others still send three rounds of 503s.
            try await Task.sleep(for: .seconds(5))
            let back = elapsed()
            try postgres(outage == "freeze" ? "thaw" : "restart")
            try await Task.sleep(for: .seconds(3))
            record.running.store(false, ordering: .relaxed)
            await load.value
            try await http.shutdown()

            let seen = record.answers.withLock { $0 }
            // Sent while the database was away (after the first moment: a COMMIT
            // already sent waits for its answer, which is the truth).
            let during = seen.filter { $0.sent > down + 0.2 && $0.sent < back - 1.5 }
            #expect(during.count >= 6, "the load kept sending: \(during.count)")
            #expect(during.allSatisfy { $0.status == 503 }, "\(Dictionary(grouping: during, by: \.status).mapValues(\.count))")
            let slowest = during.map(\.took).max() ?? 0
            #expect(slowest < 2.5, "a request during the outage took \(slowest) s")
            // Once it is back, everything answers as before.
            let after = seen.filter { $0.sent > back + 1.5 }
            #expect(!after.isEmpty && after.allSatisfy { $0.status == 200 }, "\(Dictionary(grouping: after, by: \.status).mapValues(\.count))")
            #expect(
                seen.allSatisfy { $0.status != -1 && $0.status != 500 },
                "unanswered or 500: \(seen.filter { $0.status == -1 || $0.status == 500 }.count)")

            // No rotation lost or doubled: the chain was never refused, the server
            // rotated exactly as often as the client saw, and the last token works.
            let (last, rotations, refused) = record.chain.withLock { ($0.refresh, $0.rotations, $0.refused) }
            #expect(refused.isEmpty, "the client's refresh was refused: \(refused.prefix(3))")
            let tokens = try await server.withClient { try await $0.get("/_authmock/tokens") }.json()
            let refreshTokens = try #require(tokens["refresh"] as? [[String: Any]])
            #expect(refreshTokens.filter { $0["state"] as? String == "rotated" }.count == rotations)
            #expect(refreshTokens.filter { $0["state"] as? String == "live" }.count == 1)
            let final = try await server.withClient { try await $0.form("/oauth/token", "grant_type=refresh_token&refresh_token=\(last)") }
            #expect(final.status == .ok)

            let terminated = Date()
            kill(server.process.processIdentifier, SIGTERM)
            server.process.waitUntilExit()
            #expect(server.process.terminationStatus == 0 && Date().timeIntervalSince(terminated) < 10)
        }

        /// What the load saw, shared by its tasks.
        final class LoadRecord: Sendable {
            let answers = Mutex([Answer]())
            let chain: Mutex<(refresh: String, rotations: Int, refused: [String])>
            let running = Atomic<Bool>(true)
            init(refresh: String) { chain = Mutex((refresh, 0, [])) }
        }

        /// scripts/postgres.sh COMMAND on the test database. Spawned and waited
        /// for directly: Foundation's `Process.waitUntilExit` was seen to miss
        /// this child's exit in an async test and wait forever.
        func postgres(_ command: String) throws {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("scripts/postgres.sh").path
            let words: [String] = [script, command, directory]
            let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
            defer { arguments.forEach { free($0) } }
            var pid: pid_t = 0
            let spawned = posix_spawn(&pid, script, nil, nil, arguments, environ)
            try #require(spawned == 0, "cannot run \(script): \(String(cString: strerror(spawned)))")
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            #expect(status == 0, "scripts/postgres.sh \(command) exited with \(status)")
        }
    }
}
