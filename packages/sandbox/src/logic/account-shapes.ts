/**
 * Response shapes of the account service built from generated accounts: AA fetch_data (account spec 2.2),
 * insights (2.3), BSA fetch_data's service_response (2.7) and the CSV report (4.2). Personal data is
 * masked, as in the spec's examples.
 */
import { hexId, uuidFrom } from './hash.js';
import { istDate, istDateTime, istIso } from './time.js';
import { balanceAt, maskName, type Account, type Txn } from './transactions.js';

const money = (x: number) => x.toFixed(2);

function aaTransaction(t: Txn): Record<string, unknown> {
  return {
    type: t.type,
    mode: t.mode,
    amount: t.amount,
    transactionalBalance: money(t.balance),
    transactionTimestamp: istIso(t.ts),
    valueDate: istDate(t.ts),
    txnId: t.txnId,
    narration: t.narration,
    reference: t.reference,
  };
}

/** One body[] element of fetched_data (account spec 2.2). */
export function aaBodyElement(
  acc: Account,
  txns: readonly Txn[],
  from: number,
  to: number,
  now: number,
  consentId: string,
): Record<string, unknown> {
  const linkRef = uuidFrom(`${acc.key}|link`);
  return {
    fipId: acc.fipId,
    fipName: acc.bankName,
    custId: `${acc.holderMobile}@sandbox-aa`,
    consentId,
    sessionId: uuidFrom(`${acc.key}|${from}|${to}|session`),
    fiAccountInfo: [{ accountRefNo: acc.maskedAccNumber, linkRefNo: linkRef }],
    fiObjects: [
      {
        Profile: {
          Holders: {
            Holder: {
              name: maskName(acc.holderName),
              dob: acc.holderDob,
              mobile: acc.holderMobile,
              nominee: acc.nominee,
              landline: '',
              address: acc.holderAddress,
              email: acc.holderEmail,
              pan: acc.holderPan,
              ckycRegistered: 'false',
            },
            type: 'SINGLE',
          },
        },
        Summary: {
          currentBalance: money(balanceAt(acc, now)),
          currency: 'INR',
          balanceDateTime: istIso(now),
          accountType: acc.accountType,
          accountSubType: acc.accountType,
          branch: acc.branch,
          facility: acc.accountType === 'CURRENT' ? 'OD' : 'NONE',
          ifsc: acc.ifsc,
          micrCode: acc.micr,
          openingDate: acc.openingDate,
          currentODLimit: '0',
          drawingLimit: '0',
          status: 'ACTIVE',
          pendingTxns: { PendingTxn: [] },
        },
        Transactions: { Transaction: txns.map(aaTransaction), startDate: istDate(from), endDate: istDate(to) },
        type: 'deposit',
        maskedAccNumber: acc.maskedAccNumber,
        version: '1.1',
        linkedAccRef: linkRef,
        schemaLocation: 'http://api.rebit.org.in/FISchema/deposit ../FISchema/deposit.xsd',
      },
    ],
  };
}

/** The insights object (account spec 2.3). */
export function aaInsights(
  acc: Account,
  userId: string,
  requestId: string,
  to: number,
  now: number,
): Record<string, unknown> {
  return {
    user_id: userId,
    request_id: requestId,
    data_requested_time: istDateTime(now),
    cutoff_date: istDateTime(to),
    format_type: 'sandbox_aa_json',
    fetch_extraction_report: true,
    fetch_txn_data: true,
    bank_name: acc.bankName,
    account_number: acc.maskedAccNumber,
    account_type: acc.accountType,
    ifsc_code: acc.ifsc,
    account_branch: acc.branch,
    account_open_date: acc.openingDate,
    account_od_limit: 0,
    account_drawing_limit: 0,
    account_status: 'ACTIVE',
    account_currency: 'INR',
    account_current_balance: balanceAt(acc, now),
    account_current_balance_datetime: istDateTime(now),
    account_holder_name: maskName(acc.holderName),
    account_holder_dob: acc.holderDob,
    account_holder_mobile: acc.holderMobile,
    account_holder_nominee: acc.nominee,
    account_holder_landline: '',
  };
}

const SUMMARY_FIELDS = [
  'balAvg',
  'balMax',
  'balMin',
  'cashDeposits',
  'cashWithdrawals',
  'chqDeposits',
  'chqIssues',
  'credits',
  'debits',
  'emiOrLoans',
  'inwBounces',
  'loanDisbursals',
  'outwBounces',
  'salaries',
  'totalCashDeposit',
  'totalCashWithdrawal',
  'totalChqDeposit',
  'totalChqIssue',
  'totalCredit',
  'totalDebit',
  'totalEmiOrLoan',
  'totalLoanDisbursal',
  'totalSalary',
] as const;

type Summary = Record<(typeof SUMMARY_FIELDS)[number], number>;

const r2 = (x: number) => Math.round(x * 100) / 100;

/** summaryInfo.total (account spec 2.7): counts and sums by the analyser's categories. */
function bsaTotals(txns: readonly Txn[]): Summary {
  const s = Object.fromEntries(SUMMARY_FIELDS.map((f) => [f, 0])) as Summary;
  let balSum = 0;
  s.balMax = txns.length ? -Infinity : 0;
  s.balMin = txns.length ? Infinity : 0;
  for (const t of txns) {
    balSum += t.balance;
    s.balMax = Math.max(s.balMax, t.balance);
    s.balMin = Math.min(s.balMin, t.balance);
    if (t.type === 'CREDIT') {
      s.credits++;
      s.totalCredit += t.amount;
    } else {
      s.debits++;
      s.totalDebit += t.amount;
    }
    switch (t.kind) {
      case 'cash_deposit':
        s.cashDeposits++;
        s.totalCashDeposit += t.amount;
        break;
      case 'atm':
        s.cashWithdrawals++;
        s.totalCashWithdrawal += t.amount;
        break;
      case 'cheque_deposit':
        s.chqDeposits++;
        s.totalChqDeposit += t.amount;
        break;
      case 'cheque_issue':
        s.chqIssues++;
        s.totalChqIssue += t.amount;
        break;
      case 'emi':
        s.emiOrLoans++;
        s.totalEmiOrLoan += t.amount;
        break;
      case 'bounce':
        s.inwBounces++;
        break;
      case 'loan_disbursal':
        s.loanDisbursals++;
        s.totalLoanDisbursal += t.amount;
        break;
      case 'salary':
        s.salaries++;
        s.totalSalary += t.amount;
        break;
      default:
        break;
    }
  }
  s.balAvg = txns.length ? balSum / txns.length : 0;
  for (const f of SUMMARY_FIELDS) s[f] = r2(s[f]);
  return s;
}

function bsaAverages(total: Summary, months: number): Summary {
  const a = {} as Summary;
  for (const f of SUMMARY_FIELDS) a[f] = f.startsWith('bal') ? total[f] : r2(total[f] / Math.max(1, months));
  return a;
}

/** service_response of BSA fetch_data (account spec 2.7); summaryInfo describes the first (primary) account. */
export function bsaServiceResponse(
  accounts: readonly { acc: Account; txns: readonly Txn[] }[],
  from: number,
  to: number,
  sessionKey: string,
): Record<string, unknown> {
  const primary = accounts[0].acc;
  const customer = {
    name: maskName(primary.holderName),
    address: primary.holderAddress,
    landline: '',
    mobile: primary.holderMobile,
    email: primary.holderEmail,
    pan: primary.holderPan,
    bank: primary.bankName,
  };
  const total = bsaTotals(accounts[0].txns);
  return {
    customerInfo: {
      ...customer,
      analyzerTransactionId: hexId(`${sessionKey}|analyzer`, 24),
      customerTransactionId: hexId(`${sessionKey}|customer`, 16),
      instId: 100 + (Number.parseInt(hexId(primary.bankName, 4), 16) % 900),
    },
    statementdetails: accounts.map(({ acc }, i) => ({
      fileName: `bank_statement_${i + 1}.pdf`,
      statementStatus: 'VERIFIED',
      customerInfo: { ...customer, bank: acc.bankName },
      statementAccounts: [
        {
          accountNo: acc.maskedAccNumber,
          accountType: acc.accountType,
          xnsStartDate: istDate(from),
          xnsEndDate: istDate(to),
        },
      ],
    })),
    summaryInfo: {
      instName: primary.bankName,
      accNo: primary.maskedAccNumber,
      accType: primary.accountType,
      fullMonthCount: 6,
      total,
      average: bsaAverages(total, 6),
    },
    monthlyDetails: [],
    fCUAnalysis: {
      possibleFraudIndicators: { suspiciousBankEStatements: { status: 'false' } },
      behaviouralTransactionalIndicators: {},
    },
    accountXns: accounts.map(({ acc, txns }) => ({
      accountNo: acc.maskedAccNumber,
      accountType: acc.accountType,
      xns: txns.map((t) => ({
        date: istDate(t.ts),
        chqNo: t.chqNo,
        narration: t.narration,
        amount: t.type === 'CREDIT' ? t.amount : -t.amount,
        balance: t.balance,
      })),
    })),
  };
}

function csvField(v: string | number): string {
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The CSV transactions report behind retrieve_report's link. */
export function reportCsv(rows: readonly { acc: Account; txns: readonly Txn[] }[]): string {
  const lines = ['account_number,txn_id,transaction_timestamp,value_date,type,mode,amount,balance,narration,reference'];
  for (const { acc, txns } of rows) {
    for (const t of txns) {
      lines.push(
        [
          acc.maskedAccNumber,
          t.txnId,
          istIso(t.ts),
          istDate(t.ts),
          t.type,
          t.mode,
          money(t.amount),
          money(t.balance),
          t.narration,
          t.reference,
        ]
          .map(csvField)
          .join(','),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
