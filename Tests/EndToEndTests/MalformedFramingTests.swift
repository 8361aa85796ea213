import Foundation
import Testing

/// Request bodies whose HTTP framing is broken are the client's bug: each
/// gets the dialect's documented 400 and the connection closes, never the
/// 500 "please report it" the reliability probe saw in every dialect.
@Suite(.timeLimit(.minutes(2)))
struct MalformedFramingTests {
    /// Sends `raw` on a fresh connection and reads until the server closes it.
    static func exchange(_ raw: String, port: Int) throws -> String {
        let connection = try RawConnection(port: port)
        connection.send(raw)
        return connection.readToEnd()
    }

    static let bodies: [(name: String, framing: String)] = [
        ("a chunk size that is not hex", "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"),
        ("chunk lines ended by LF alone", "Transfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n"),
        ("an unknown transfer coding", "Transfer-Encoding: xchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    ]

    @Test(arguments: [("oauth2", "/oauth/token", "\"invalid_request\""), ("envelope", "/auth/login", "40008")])
    func brokenFramingIsADocumented400(profile: String, path: String, code: String) throws {
        let server = try ServingBinary(["--profile", profile])
        for body in Self.bodies {
            let answer = try Self.exchange("POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + body.framing, port: server.port)
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(body.name): \(answer)")
            #expect(answer.contains(code), "\(body.name): \(answer)")
            #expect(answer.lowercased().contains("connection: close"), "\(body.name): \(answer)")
        }
        let exit = server.interrupt()
        #expect(exit.status == 0)
        #expect(!exit.stderr.contains("internal error"), "\(exit.stderr)")
    }

    /// A request line or header block the decoder refuses gets the
    /// dialect's malformed_framing answer in its shape (cognito's file leaves
    /// it to the shared row, in its `__type` body), with its length,
    /// and the connection closes (it was a bare 400 with no body); the
    /// server answers the next connection as before.
    @Test(arguments: [("oauth2", "\"invalid_request\""), ("envelope", "40008"), ("cognito", "\"__type\":\"invalid_request\"")])
    func anUnparsableHeadIsTheDialectsDocumented400(profile: String, code: String) throws {
        let server = try ServingBinary(["--profile", profile])
        for head in ["GARBAGE\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\nA header without a colon\r\n\r\n"] {
            let answer = try Self.exchange(head, port: server.port)
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
            #expect(answer.contains(code) && answer.lowercased().contains("connection: close"), "\(answer)")
            let parts = answer.components(separatedBy: "\r\n\r\n")
            let length = parts.first?.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            #expect(length.map { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } == parts.dropFirst().joined().utf8.count)
        }
        let health = try Self.exchange("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(health.hasPrefix("HTTP/1.1 200"), "\(health)")
        #expect(server.interrupt().status == 0)
    }
}
