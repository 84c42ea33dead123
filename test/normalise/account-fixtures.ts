/** Spec-shaped account responses (account spec 2.2-2.7), built fresh per test so tests may mutate them. */

export function aaTransaction(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'DEBIT',
    mode: 'OTHERS',
    amount: 1500.5,
    transactionalBalance: '48499.50',
    transactionTimestamp: '2024-01-05T10:15:00+05:30',
    valueDate: '2024-01-05',
    txnId: 'TXN001',
    narration: 'UPI/PAYMENT/GROCERY',
    reference: 'REF001',
    ...over,
  };
}

export function aaFiObject(
  masked: string,
  txns: unknown[],
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    Profile: {
      Holders: {
        Holder: {
          name: 'Ramesh Kumar',
          dob: '1985-02-03',
          mobile: '9876543210',
          nominee: 'REGISTERED',
          landline: '',
          address: '12 MG Road, Bengaluru',
          email: 'ramesh@example.com',
          pan: 'ABCDE1234F',
          ckycRegistered: 'true',
        },
        type: 'SINGLE',
      },
    },
    Summary: {
      currentBalance: '50000.00',
      currency: 'INR',
      balanceDateTime: '2024-03-01T09:00:00+05:30',
      accountType: 'SAVINGS',
      accountSubType: 'SAVINGS',
      branch: 'MG ROAD',
      facility: 'OD',
      ifsc: 'HDFC0000001',
      micrCode: '560240002',
      openingDate: '2015-04-01',
      currentODLimit: '0',
      drawingLimit: '0',
      status: 'ACTIVE',
      pendingTxns: { PendingTxn: [{ transactionType: 'DEBIT', amount: 100 }] },
    },
    Transactions: { Transaction: txns, startDate: '2024-01-01', endDate: '2024-03-01' },
    type: 'deposit',
    maskedAccNumber: masked,
    version: '1.1',
    linkedAccRef: `ref-${masked}`,
    schemaLocation: 'x',
    ...over,
  };
}

export function aaResponse(fiObjects: unknown[], over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    user_id: 'USER1',
    request_id: 'REQ-AA-1',
    aa_session_id: 'SESS1',
    success: true,
    service: 'finvu',
    service_response: {
      consent_status: 'ACCEPTED',
      consent_id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
      fi_request_status: 'ready',
      fetched_data: {
        header: { channelId: 'finsense', rid: 'r1', ts: '2024-03-01T09:00:00.000+05:30' },
        body: [
          {
            fipId: 'HDFC-FIP',
            fipName: 'HDFC Bank',
            custId: '9876543210@finvu',
            consentId: 'c1',
            sessionId: 's1',
            fiAccountInfo: [{ accountRefNo: 'a1', linkRefNo: 'l1' }],
            fiObjects,
          },
        ],
      },
    },
    insights: {
      user_id: 'USER1',
      request_id: 'REQ-AA-1',
      data_requested_time: '2024-03-01 09:00:00',
      cutoff_date: '2024-03-01 00:00:00',
      format_type: 'json',
      fetch_extraction_report: true,
      fetch_txn_data: true,
      bank_name: 'HDFC Bank',
      account_number: 'XXXXXXXX1234',
      account_type: 'SAVINGS',
      ifsc_code: 'HDFC0000001',
      account_branch: 'MG ROAD',
      account_open_date: '2015-04-01',
      account_od_limit: 0,
      account_drawing_limit: 0,
      account_status: 'ACTIVE',
      account_currency: 'INR',
      account_current_balance: 50000,
      account_current_balance_datetime: '2024-03-01 09:00:00',
      account_holder_name: 'Ramesh Kumar',
      account_holder_dob: '1985-02-03',
      account_holder_mobile: '9876543210',
      account_holder_nominee: 'REGISTERED',
      account_holder_landline: '080-1234567',
    },
    ...over,
  };
}

const TOTALS = {
  balAvg: 25000.5,
  balMax: 60000,
  balMin: 100,
  cashDeposits: 2,
  cashWithdrawals: 1,
  chqDeposits: 0,
  chqIssues: 0,
  credits: 10,
  debits: 25,
  emiOrLoans: 1,
  inwBounces: 0,
  loanDisbursals: 0,
  outwBounces: 0,
  salaries: 3,
  totalCashDeposit: 10000,
  totalCashWithdrawal: 5000,
  totalChqDeposit: 0,
  totalChqIssue: 0,
  totalCredit: 150000,
  totalDebit: 120000,
  totalEmiOrLoan: 12000,
  totalLoanDisbursal: 0,
  totalSalary: 90000,
};

export function bsaXn(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { date: '2024-01-05', chqNo: '', narration: 'SALARY JAN', amount: 30000, balance: 45000, ...over };
}

export function bsaResponse(accountXns: unknown[], over: Record<string, unknown> = {}): Record<string, unknown> {
  const pii = {
    name: 'Ramesh Kumar',
    address: '12 MG Road',
    landline: '',
    mobile: '9876543210',
    email: 'r@example.com',
    pan: 'ABCDE1234F',
  };
  return {
    request_id: 'REQ-BSA-1',
    user_id: 'USER1',
    aa_session_id: 'SESS1',
    status: 'completed',
    error: null,
    service_response: {
      customerInfo: { ...pii, analyzerTransactionId: 'A1', customerTransactionId: 'C1', bank: 'HDFC Bank', instId: 12 },
      statementdetails: [
        {
          fileName: 'statement_jan.pdf',
          statementStatus: 'VERIFIED',
          customerInfo: { ...pii, bank: 'HDFC Bank' },
          statementAccounts: [
            { accountNo: 'XXXXXX5678', accountType: 'SAVINGS', xnsStartDate: '2024-01-01', xnsEndDate: '2024-03-31' },
          ],
        },
      ],
      summaryInfo: {
        instName: 'HDFC Bank',
        accNo: 'XXXXXX5678',
        accType: 'SAVINGS',
        fullMonthCount: 3,
        total: { ...TOTALS },
        average: { ...TOTALS, totalCredit: '50000.00' },
      },
      monthlyDetails: [],
      fCUAnalysis: {
        possibleFraudIndicators: { suspiciousBankEStatements: { status: 'false' } },
        behaviouralTransactionalIndicators: {},
      },
      accountXns,
    },
    ...over,
  };
}
