import HTTPTypes
import Testing

@testable import AuthmockServer

/// How an `Authorization` header is read: the scheme in any case, spaces
/// and tabs around it ignored, one space after the scheme, a bare token
/// told from an unknown scheme, Basic decoded (RFC 6749 section 2.3.1).
struct CredentialParsingTests {
    @Test(arguments: [
        ("Bearer abc.def.ghi", PresentedCredential.bearer("abc.def.ghi")),
        ("bEaReR abc", .bearer("abc")),
        ("  Bearer   abc \t", .bearer("abc")),
        ("\tBearer abc", .bearer("abc")),
        ("Bearer", .bearer("")),
        ("Bearer ", .bearer("")),
        ("Bearer a b", .bearer("a b")),
        ("Bearer\tabc", .bare("Bearer\tabc")),
        ("Bearerabc", .bare("Bearerabc")),
        ("abc.def.ghi", .bare("abc.def.ghi")),
        ("Token abc", .other(scheme: "Token")),
        ("Bearers abc", .other(scheme: "Bearers")),
        ("", .none),
        ("   ", .none),
        ("Basic ZGVtbzpkZW1vLXNlY3JldA==", .basic(user: "demo", password: "demo-secret")),
        ("basic ZGVtbyUzQTE6cyUyNTI=", .basic(user: "demo:1", password: "s%2")),
        ("Basic !!!", .other(scheme: "Basic")),
        ("Basic ZGVtbw==", .other(scheme: "Basic")),
        ("Bearer ünï", .bearer("ünï")),
        ("ünï", .bare("ünï")),
    ])
    func header(_ header: String, _ expected: PresentedCredential) {
        #expect(PresentedCredential(header: header) == expected, "\(header)")
        #expect(PresentedCredential(HTTPFields([HTTPField(name: .authorization, value: header)])) == expected, "\(header)")
    }

    @Test func noHeaderIsNone() {
        #expect(PresentedCredential(HTTPFields()) == .none)
    }
}
