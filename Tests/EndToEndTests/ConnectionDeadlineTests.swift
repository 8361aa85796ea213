import Foundation
import NIOCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A bare TCP connection to the server, for clients no HTTP library would be:
/// ones that stall half-way or send what they should not.
final class RawConnection {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BinaryError("cannot connect to 127.0.0.1:\(port)") }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Everything until the server closes (or 20 s pass), as text.
    func readToEnd() -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            data += buffer[0..<count]
        }
        return String(decoding: data, as: UTF8.self)
    }

    deinit { close(fd) }
}

/// Open descriptors of a process (its sockets among them).
func openDescriptors(_ pid: Int32) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
}

/// Connection deadlines, through the real binary: no stalled client holds a
/// socket or the shutdown forever.
@Suite(.serialized) struct ConnectionDeadlineTests {
    @Test func aStalledBodyDoesNotHoldShutdownPastTheDrainDeadline() throws {
        let server = try ServingBinary(["--drain", "2", "--request-read-timeout", "120"])
        let stalled = try RawConnection(port: server.port)
        stalled.send(
            "POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type")
        Thread.sleep(forTimeInterval: 0.3)
        let started = Date()
        let exit = server.interrupt()
        #expect(exit.status == 0, "\(exit.stderr)")
        // 2 s of drain, then the connections are closed and the process exits.
        #expect(Date().timeIntervalSince(started) < 8, "exit took \(Date().timeIntervalSince(started)) s")
    }

    @Test func aRequestThatStopsArrivingIsCutOffAndItsDescriptorFreed() throws {
        let server = try ServingBinary(["--request-read-timeout", "1"])
        let baseline = openDescriptors(server.process.processIdentifier)
        // Half a request line, a head without its end, a body that stops: all stall.
        let stalls = try (0..<30).map { index -> RawConnection in
            let connection = try RawConnection(port: server.port)
            switch index % 3 {
            case 0: connection.send("GET /api/m")
            case 1: connection.send("GET /api/me HTTP/1.1\r\nHost: x\r\n")
            default: connection.send("POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
            }
            return connection
        }
        // An oversized header block: answered 400, then the connection is closed too.
        let flood = try (0..<10).map { _ -> RawConnection in
            let connection = try RawConnection(port: server.port)
            connection.send("GET /api/me HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n")
            return connection
        }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(openDescriptors(server.process.processIdentifier) >= baseline + 20)
        for connection in stalls { _ = connection.readToEnd() }
        for connection in flood { _ = connection.readToEnd() }
        // Every stalled connection was closed by the server (readToEnd returned), and its descriptor freed.
        let deadline = Date().addingTimeInterval(10)
        while openDescriptors(server.process.processIdentifier) > baseline + 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
        #expect(openDescriptors(server.process.processIdentifier) <= baseline + 2, "baseline \(baseline)")
        // And the server still answers.
        let fresh = try RawConnection(port: server.port)
        fresh.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(fresh.readToEnd().hasPrefix("HTTP/1.1 200"))
        // CONNECT (a proxy tunnel request) is answered and the connection closed, not left hanging.
        let tunnel = try RawConnection(port: server.port)
        tunnel.send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
        let tunnelAnswer = tunnel.readToEnd()
        #expect(tunnelAnswer.hasPrefix("HTTP/1.1 4"), "\(tunnelAnswer)")
        #expect(tunnelAnswer.lowercased().contains("connection: close"), "\(tunnelAnswer)")
        // No body can follow (NIO sends none to a CONNECT), so none is announced.
        #expect(!tunnelAnswer.lowercased().contains("content-type") && tunnelAnswer.hasSuffix("\r\n\r\n"), "\(tunnelAnswer)")
        // HEAD over the wire: the GET's status and headers, no body.
        let head = try RawConnection(port: server.port)
        head.send("HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let headAnswer = head.readToEnd()
        #expect(headAnswer.hasPrefix("HTTP/1.1 200") && headAnswer.hasSuffix("\r\n\r\n"), "\(headAnswer)")
        // HTTP/1.0 without keep-alive: the answer, then the close that ends it for a 1.0 client.
        let old = try RawConnection(port: server.port)
        let sent = Date()
        old.send("GET /health HTTP/1.0\r\n\r\n")
        let oldAnswer = old.readToEnd()
        #expect(oldAnswer.hasPrefix("HTTP/1.1 200") && oldAnswer.hasSuffix(#"{"status":"ok"}"#), "\(oldAnswer)")
        #expect(Date().timeIntervalSince(sent) < 5, "an HTTP/1.0 connection was left open")
        #expect(server.interrupt().status == 0)
    }

    @Test func anOversizedChunkedBodyGetsTheDocumentedAnswerAndAJournalEntry() async throws {
        let server = try ServingBinary(["--max-body", "1024"])
        let connection = try RawConnection(port: server.port)
        var request =
            "POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        for _ in 0..<4 { request += "200\r\n" + String(repeating: "a", count: 512) + "\r\n" }
        request += "0\r\n\r\n"
        connection.send(request)
        let answer = connection.readToEnd()
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
        #expect(answer.contains("payload_too_large"), "\(answer)")
        let journal = try await server.withClient { client in String(buffer: try await client.get("/_authmock/journal").body ?? ByteBuffer()) }
        let entries = try #require((try JSONSerialization.jsonObject(with: Data(journal.utf8)) as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.contains { $0["status"] as? Int == 413 }, "\(journal)")
        #expect(server.interrupt().status == 0)
    }
}
