#if canImport(Testing)
    public import Testing
    public import AuthmockScenario

    extension AuthmockCase: CustomTestStringConvertible {
        /// How the test navigator and `swift test` name the argument: `1.1 [oauth2] ten concurrent requests...`.
        public var testDescription: String { description }
    }

    extension AuthmockCase {
        /// Runs the case against `client` as the current test: a FAIL or
        /// ERROR records an issue whose message is the case's findings and
        /// evidence, a NON-STRICT (only `should` expectations broken) a
        /// warning, and a case the client answered `unsupported` cancels
        /// the test case with the client's reason. Returns the result.
        @discardableResult
        public func check(_ client: ClientUnderTest, sourceLocation: SourceLocation = #_sourceLocation) async throws -> CaseResult {
            let result = await run(against: client)
            let message = Comment(rawValue: Self.failureMessage(result))
            switch result.verdict {
            case .pass: break
            case .fail, .error: Issue.record(message, sourceLocation: sourceLocation)
            case .nonStrict:
                #if compiler(>=6.3)
                    Issue.record(message, severity: .warning, sourceLocation: sourceLocation)
                #endif
            case .skip:
                #if compiler(>=6.3)
                    try Test.cancel(Comment(rawValue: result.reason ?? "skipped"), sourceLocation: sourceLocation)
                #endif
            }
            return result
        }
    }
#endif
