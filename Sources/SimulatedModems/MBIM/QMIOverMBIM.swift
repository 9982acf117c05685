/// QMI over MBIM (service d1a30bc2-f97a-6e43-bf65-c7e24fb0f0d3, CID 1 "MSG"): the information
/// buffer is a whole QMUX frame, answered by a QMUX frame, as Sierra's MBIM firmware tunnels QMI
/// (`qmicli --device-open-mbim`, or libqmi's automatic MBIM mode on a cdc_mbim port). DMS Set FCC
/// Authentication (0x555F), which ModemManager's fcc-unlock.d script for 1199:9079 sends, unlocks
/// the FCC lock; every other message goes to a QMI function sharing the modem's state.
extension MBIMFunction {
    /// DMS Set FCC Authentication.
    static let setFCCAuthentication: UInt16 = 0x555F

    func qmiMessage(cid: UInt32, info: [UInt8], now: Double) -> (MBIMStatus, [UInt8]) {
        guard cid == 1, let request = QMUX.parse(info) else { return (.invalidParameters, []) }
        if request.service == QMIService.dms.rawValue, request.messageID == Self.setFCCAuthentication {
            state.fccUnlocked = true
            return (
                .success,
                QMUX.frame(
                    service: request.service, clientID: request.clientID,
                    transactionID: request.transactionID, messageID: request.messageID,
                    tlvs: [QMUX.result(.none)])
            )
        }
        // The tunnel carries one response per request: indications and junk frames stay behind.
        let answers = tunnelledQMI.receive(info, now: now).filter { !tunnelledQMI.isJunk($0) }
        tunnelledQMI.discardPartialInput()  // one message per command: nothing carries over
        guard let response = answers.first else { return (.failure, []) }
        return (.success, response)
    }
}
