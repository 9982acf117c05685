import CMBIM
import CQMI
import CellpathCore
import GLibRuntime
import ModemDiscovery
import Testing

@testable import Modems

/// How a failed library call becomes a `ModemError`: the level, the exit code's kind, the text.
@Suite struct SessionErrorTests {
    private static let session = ModemSession(
        port: ControlPort(name: "cdc-wdm0", devicePath: "/dev/cdc-wdm0", protocol: .mbim),
        timeout: .seconds(2), logger: .silent, proxied: true)

    @Test func operationsNameThePort() {
        #expect(Self.session.describe("open") == "open cdc-wdm0")
        #expect(Self.session.describe("open through mbim-proxy") == "open cdc-wdm0 through mbim-proxy")
        #expect(Self.session.describe("allocate a DMS client ID") == "allocate a DMS client ID on cdc-wdm0")
        #expect(Self.session.describe("query the register state") == "query the register state of cdc-wdm0")
    }

    @Test func aLibraryTimeoutIsATransportTimeout() {
        for failure in [
            GLibError(
                domain: mbim_core_error_quark(), code: Int32(MBIM_CORE_ERROR_TIMEOUT.rawValue),
                message: "Transaction timed out"),
            GLibError(
                domain: qmi_core_error_quark(), code: Int32(QMI_CORE_ERROR_TIMEOUT.rawValue),
                message: "Transaction timed out")
        ] {
            let error = Self.session.error("query the register state", failure)
            #expect(error.layer == .transport && error.kind == .temporary)
            #expect(error.message == "couldn't query the register state of cdc-wdm0: no answer within 2 s")
        }
    }

    /// Opened directly, a port that another program reads (ModemManager, a proxy) loses its
    /// answers to it: the hint says so.
    @Test func aTimeoutOfADirectlyOpenedPortPointsAtOtherReaders() {
        let direct = ModemSession(port: Self.session.port, timeout: .seconds(2), logger: .silent, proxied: false)
        #expect(
            direct.timedOut("open").hint?.hasPrefix(
                "another program may be reading the port (ModemManager, mbim-proxy, qmi-proxy)") == true)
        #expect(Self.session.timedOut("open").hint?.hasPrefix("the modem may be busy or hung") == true)
    }

    @Test func statusesAreProtocolErrorsWithTheirNames() {
        let mbim = Self.session.error(
            "query the home provider",
            GLibError(
                domain: mbim_status_error_quark(), code: Int32(MBIM_STATUS_ERROR_NO_DEVICE_SUPPORT.rawValue),
                message: "NoDeviceSupport"))
        #expect(mbim.layer == .protocol && mbim.kind == .unavailable && mbim.status == "NoDeviceSupport")
        #expect(
            mbim.message
                == "couldn't query the home provider of cdc-wdm0: the modem answered NoDeviceSupport (MBIM status)")
        let qmi = Self.session.error(
            "get the IMSI",
            GLibError(
                domain: qmi_protocol_error_quark(), code: Int32(QMI_PROTOCOL_ERROR_INVALID_QMI_COMMAND.rawValue),
                message: "InvalidQmiCommand"))
        #expect(qmi.layer == .protocol && qmi.status == "InvalidQmiCommand")
        #expect(qmi.message == "couldn't get the IMSI of cdc-wdm0: the modem answered InvalidQmiCommand (QMI error)")
    }

    @Test func anythingElseIsATransportErrorWithTheLibrarysMessage() {
        let error = Self.session.error(
            "open",
            GLibError(
                domain: mbim_core_error_quark(), code: Int32(MBIM_CORE_ERROR_FAILED.rawValue),
                message: "Cannot open device file"))
        #expect(error.layer == .transport && error.kind == .unavailable && error.status == nil)
        #expect(error.message == "couldn't open cdc-wdm0: Cannot open device file")
    }
}
