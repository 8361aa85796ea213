import Foundation
import Testing

/// Request bodies whose HTTP framing is broken are the client's bug: each
/// gets the dialect's documented 400 and the connection closes, never the
/// 500 "please report it" the reliability probe saw in every profile.
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
}
