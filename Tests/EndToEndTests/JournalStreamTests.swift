import AsyncHTTPClient
import Foundation
import Glibc
import NIOCore
import TestSupport
import Testing

/// `GET /_authmock/journal` is written as the client reads it (issue 35,
/// item 9): clients that ask for a large journal and never read hold one
/// chunk of the server's memory each, not a copy of the journal.
@Suite(.serialized) struct JournalStreamTests {
    /// The server's resident memory, from /proc.
    static func residentMegabytes(_ pid: Int32) throws -> Double {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return Double(line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) / 1024
    }

    @Test func stalledReadersOfALargeJournalDoNotPinMemory() async throws {
        let server = try ServingBinary(["--log-level", "error", "--request-read-timeout", "2"])
        // About 24 MB of journal: 6,000 requests with a 4 KB path each.
        let path = "/" + String(repeating: "p", count: 4000)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: 6000, by: 8) {
                        let response = try await http.execute(HTTPClientRequest(url: server.baseURL + path + "?\(index)"), timeout: .seconds(30))
                        _ = try await response.body.collect(upTo: 1 << 16)
                    }
                }
            }
            try await group.waitForAll()
        }
        try await http.shutdown()

        // Read whole, it is the same answer as before: every entry, in order, with its totals.
        let page = try await server.withClient { try await $0.get("/_authmock/journal") }.json()
        let entries = try #require(page["entries"] as? [[String: Any]])
        let seqs = entries.compactMap { $0["seq"] as? Int }
        #expect(entries.count == 6000 && seqs == seqs.sorted(), "\(entries.count)")
        #expect(page["last"] as? Int == seqs.last && page["held"] as? Int == 6000 && page["dropped"] as? Int == 0)
        let paged = try await server.withClient { try await $0.get("/_authmock/journal?since=10&limit=3") }.json()
        #expect((paged["entries"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [11, 12, 13])
        #expect(paged["last"] as? Int == 13)

        let before = try Self.residentMegabytes(server.process.processIdentifier)
        let stalled = try (0..<20).map { _ in try RawConnection(port: server.port) }
        for connection in stalled { connection.send("GET /_authmock/journal HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n") }
        try await Task.sleep(for: .seconds(2))
        let during = try Self.residentMegabytes(server.process.processIdentifier)
        // Each copy of the answer is about 26 MB: 20 of them held were 500 MB and more.
        #expect(during - before < 120, "20 stalled readers took the server from \(before) MB to \(during) MB")
        // The server still answers everyone else, at once.
        let asked = ContinuousClock.now
        let health = try await server.withClient { try await $0.get("/health") }
        #expect(health.status == .ok)
        #expect(ContinuousClock.now - asked < .seconds(2), "/health beside 20 stalled readers took \(ContinuousClock.now - asked)")
        // An answer nobody reads for the read timeout (2 s here) ends its connection: reading
        // afterwards finds what was sent before, cut off, then the close (it used to be held open forever).
        try await Task.sleep(for: .seconds(4))
        var quick = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(stalled[0].fd, SOL_SOCKET, SO_RCVTIMEO, &quick, socklen_t(MemoryLayout<timeval>.size))
        let read = ContinuousClock.now
        let text = stalled[0].readToEnd()
        #expect(text.hasPrefix("HTTP/1.1 200") && !text.hasSuffix("}"), "\(text.count) bytes, ending \(text.suffix(40))")
        #expect(ContinuousClock.now - read < .seconds(3), "the connection was still open: the whole answer took \(ContinuousClock.now - read)")
        _ = server.interrupt()
    }
}
